package ltl

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/antlr4-go/antlr/v4"

	"github.com/mcpredict/mcpredict/ltl/parser"
)

// SyntaxError is a pattern that is not in the language or not meaningful.
type SyntaxError struct {
	Column int // 1-based, counted in characters from the start of the pattern
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("column %d: %s", e.Column, e.Msg)
}

const expectTerm = "expected a term R1 W1 A1 R2 W2 A2"

// Parse reads a pattern. Every error it returns is a *SyntaxError. Besides
// the grammar it rejects patterns that cannot mean anything useful: an empty
// one, one that starts or ends with an optional (*) term, one longer than
// MaxTerms, and one without both a local and a remote term.
func Parse(src string) ([]Term, error) {
	terms, cols, err := parseTerms(src)
	if err != nil {
		return nil, err
	}
	if err := check(terms, cols); err != nil {
		return nil, err
	}
	return terms, nil
}

// parseTerms runs the generated ANTLR parser and returns the terms with the
// 1-based column of each.
func parseTerms(src string) ([]Term, []int, error) {
	listener := &firstError{}

	lexer := parser.NewPatternLexer(antlr.NewInputStream(src))
	// The default ConsoleErrorListener prints to stderr; errors are ours to
	// report, as values.
	lexer.RemoveErrorListeners()
	lexer.AddErrorListener(listener)

	p := parser.NewPatternParser(antlr.NewCommonTokenStream(lexer, antlr.TokenDefaultChannel))
	p.RemoveErrorListeners()
	p.AddErrorListener(listener)

	tree := p.Pattern()
	if listener.err != nil {
		return nil, nil, listener.err
	}

	var terms []Term
	var cols []int
	for _, tc := range tree.AllTerm() {
		tok := tc.TERM().GetSymbol()
		t, ok := termFromText(tok.GetText())
		if !ok {
			// The lexer rule only admits valid terms; reaching here means the
			// grammar and this function disagree.
			return nil, nil, &SyntaxError{Column: tok.GetStart() + 1, Msg: fmt.Sprintf("internal error: bad term token %q", tok.GetText())}
		}
		terms = append(terms, t)
		cols = append(cols, tok.GetStart()+1)
	}
	return terms, cols, nil
}

func termFromText(s string) (Term, bool) {
	if len(s) < 2 || len(s) > 6 {
		return Term{}, false
	}
	var t Term
	if len(s) >= 5 && s[2] == '(' && s[4] == ')' {
		switch s[3] {
		case 'x':
			t.Var = VarX
		case 'y':
			t.Var = VarY
		default:
			return Term{}, false
		}
		s = s[:2] + s[5:]
	}
	if len(s) > 3 {
		return Term{}, false
	}
	switch s[0] {
	case 'R':
		t.Access = Read
	case 'W':
		t.Access = Write
	case 'A':
		t.Access = Any
	default:
		return Term{}, false
	}
	switch s[1] {
	case '1':
		t.Side = Local
	case '2':
		t.Side = Remote
	default:
		return Term{}, false
	}
	if len(s) == 3 {
		switch s[2] {
		case '+':
			t.Quant = Plus
		case '*':
			t.Quant = Star
		default:
			return Term{}, false
		}
	}
	return t, true
}

// check applies the rules that the grammar does not express.
func check(terms []Term, cols []int) error {
	if err := checkVars(terms, cols); err != nil {
		return err
	}
	if len(terms) == 0 {
		return &SyntaxError{Column: 1, Msg: "empty pattern, " + expectTerm}
	}
	if len(terms) > MaxTerms {
		return &SyntaxError{Column: cols[MaxTerms], Msg: fmt.Sprintf("too many terms (%d), at most %d", len(terms), MaxTerms)}
	}
	// An optional end would only make the pattern match a shorter instance
	// that the pattern without that term already reports; it is almost always
	// a mistake, so say so.
	if terms[0].Quant == Star {
		return &SyntaxError{Column: cols[0], Msg: fmt.Sprintf("first term '%s' is optional; a pattern must start with a term that occurs (drop the * or use +)", terms[0])}
	}
	last := len(terms) - 1
	if terms[last].Quant == Star {
		return &SyntaxError{Column: cols[last], Msg: fmt.Sprintf("last term '%s' is optional; a pattern must end with a term that occurs (drop the * or use +)", terms[last])}
	}
	var local, remote bool
	for _, t := range terms {
		local = local || t.Side == Local
		remote = remote || t.Side == Remote
	}
	if !local {
		return &SyntaxError{Column: cols[0], Msg: "no local term (R1 W1 A1): an atomicity violation needs accesses of the local thread"}
	}
	if !remote {
		return &SyntaxError{Column: cols[0], Msg: "no remote term (R2 W2 A2): an atomicity violation needs an access of the remote thread"}
	}
	return nil
}

// checkVars requires a pattern that names a variable to name both: a
// two-variable pattern is about the relation of x and y; one that names
// only x says nothing a single-variable pattern does not.
func checkVars(terms []Term, cols []int) error {
	var x, y bool
	first := -1
	for i, t := range terms {
		if t.Var != VarAny && first < 0 {
			first = i
		}
		x = x || t.Var == VarX
		y = y || t.Var == VarY
	}
	switch {
	case first < 0 || x && y:
		return nil
	case x:
		return &SyntaxError{Column: cols[first], Msg: "the pattern names x but not y: a two-variable pattern is about both variables of an atomic set (or name neither for a single-variable pattern)"}
	}
	return &SyntaxError{Column: cols[first], Msg: "the pattern names y but not x: a two-variable pattern is about both variables of an atomic set (or name neither for a single-variable pattern)"}
}

// firstError keeps the first syntax error the lexer or parser reports; later
// ones are usually consequences of the first.
type firstError struct {
	antlr.DefaultErrorListener
	err *SyntaxError
}

func (l *firstError) SyntaxError(_ antlr.Recognizer, offending interface{}, _, column int, msg string, _ antlr.RecognitionException) {
	if l.err != nil {
		return
	}
	tok, ok := offending.(antlr.Token)
	if !ok || tok == nil {
		// Lexer errors carry no token. The BAD rule matches every character,
		// so this is not expected; keep ANTLR's own message just in case.
		l.err = &SyntaxError{Column: column + 1, Msg: msg}
		return
	}
	col := tok.GetStart() + 1
	if tok.GetTokenType() == antlr.TokenEOF {
		l.err = &SyntaxError{Column: col, Msg: "unexpected end of pattern, " + expectTerm}
		return
	}
	text := tok.GetText()
	l.err = &SyntaxError{Column: col, Msg: "unexpected " + quoteWord(text) + ", " + expectTerm + hint(text)}
}

// quoteWord quotes a bad word for a message, keeping it short and printable.
func quoteWord(s string) string {
	const max = 20
	if r := []rune(s); len(r) > max {
		s = string(r[:max]) + "…"
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return "'" + s + "'"
}

// hint explains the mistakes people are likely to make.
func hint(word string) string {
	switch {
	case strings.HasPrefix(word, "*") || strings.HasPrefix(word, "+"):
		return " (a quantifier follows its term without a space: R1*)"
	case gluedTerms(word):
		return " (separate terms with spaces)"
	case strings.ContainsAny(word, "()"):
		return " (a variable is written right after the thread digit, (x) or (y), as in R1(x)*)"
	case len(word) >= 2 && strings.ContainsRune("rwa", rune(word[0])) && strings.ContainsRune("12", rune(word[1])):
		return " (terms are upper case)"
	case len(word) == 4 && strings.ContainsRune("*+", rune(word[2])) && strings.ContainsRune("*+", rune(word[3])):
		return " (a term takes at most one quantifier)"
	}
	return ""
}

// gluedTerms reports whether word starts with a term directly followed by
// another term's letter, as in "R1W2" or "A2*R1".
func gluedTerms(word string) bool {
	if len(word) < 3 || !strings.ContainsRune("RWA", rune(word[0])) || !strings.ContainsRune("12", rune(word[1])) {
		return false
	}
	rest := word[2:]
	if len(rest) >= 3 && rest[0] == '(' && rest[2] == ')' {
		rest = rest[3:]
	}
	if rest == "" {
		return false
	}
	if rest[0] == '*' || rest[0] == '+' {
		rest = rest[1:]
	}
	return rest != "" && strings.ContainsRune("RWA", rune(rest[0]))
}
