// Package e2e holds the service's multi-process tests: real `mcpredict
// serve` and `mcpredict worker` processes, started with the deploy/ entry
// scripts that the containers use, on loopback. It has no code of its own.
package e2e
