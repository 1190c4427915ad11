// Pattern.g4 — the atomicity-violation pattern language of mcpredict.
//
// A pattern is a sequence of terms separated by white space. A term names an
// access kind (R read, W write, A any) of the local (1) or remote (2) thread,
// optionally followed, without a space, by a variable, (x) or (y), and by a
// quantifier: * (zero or more) or + (one or more). Example: R1 A2* W2 A2* R1.
// A pattern whose terms name variables is a two-variable pattern over an
// atomic set {x, y}; a term of it without a variable matches either one.
// Example: R1(x) A2* W2(x) A2* W2(y) A2* R1(y)
//
// The Go parser in ./parser is generated from this file with antlr-ng (see
// the go:generate line in ../ltl.go); do not edit the generated code.
grammar Pattern;

pattern
    : term* EOF
    ;

term
    : TERM
    ;

// A whole term is one token so that "R1R2" or "R1 *" is a single bad word
// instead of silently becoming two terms or a detached quantifier.
TERM
    : [RWA] [12] VARIABLE? [*+]?
    ;

// The variable of a term, in the notation of Vaziri, Tip and Dolby (POPL
// 2006): R1(x) is a read of x by the local thread.
fragment VARIABLE
    : '(' [xy] ')'
    ;

WS
    : [ \t\r\n]+ -> skip
    ;

// Anything else up to the next white space is one unexpected word. Rule order
// makes TERM win over BAD when both match the same text; BAD wins when the
// word is longer (R1X, R1**), which is what we want to report.
BAD
    : ~[ \t\r\n]+
    ;
