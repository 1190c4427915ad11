module github.com/mcpredict/mcpredict

go 1.26.8

require (
	github.com/antlr4-go/antlr/v4 v4.13.1 // indirect
	github.com/klauspost/compress v1.20.3 // indirect
	github.com/sourcegraph/conc v0.3.0 // indirect
	golang.org/x/exp v0.0.0-20240506185415-9bf2ced13842 // indirect
)
