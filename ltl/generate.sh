#!/bin/sh
# Regenerates ./parser from Pattern.g4. Run through `go generate ./ltl`.
#
# antlr-ng is a development tool from the npm registry, pinned to an exact
# version in the repository's package.json/package-lock.json; `npm ci`
# installs exactly that version into ../node_modules (not committed). The
# generated Go code is committed, so building mcpredict needs neither node
# nor npm.
set -eu
cd "$(dirname "$0")/.."

npm ci --no-audit --no-fund --loglevel=error
rm -rf ltl/parser
npx --no-install antlr-ng -Dlanguage=Go --package parser --generate-listener false \
	-o ltl/parser ltl/Pattern.g4

# Only the Go sources are needed; the .interp/.tokens files serve other tools.
rm -f ltl/parser/*.interp ltl/parser/*.tokens

for f in ltl/parser/*.go; do
	# antlr-ng writes no generated-code header; tools (linters, coverage,
	# reviewers) look for this exact form.
	# Each rule ends with an unreachable `goto errorExit` that only keeps the
	# label used; go vet rejects unreachable code, and every rule of this
	# grammar already jumps to the label, so drop it (the build fails loudly if
	# a future rule does not).
	{
		echo '// Code generated from Pattern.g4 by antlr-ng. DO NOT EDIT.'
		echo
		grep -v 'goto errorExit // Trick to prevent compiler error' "$f"
	} >"$f.tmp"
	mv "$f.tmp" "$f"
done
gofmt -w ltl/parser
