// Code generated from Pattern.g4 by antlr-ng. DO NOT EDIT.

package parser

import (
	"fmt"
	"github.com/antlr4-go/antlr/v4"
	"sync"
	"unicode"
)

// Suppress unused import error
var _ = fmt.Printf
var _ = sync.Once{}
var _ = unicode.IsLetter

type PatternLexer struct {
	*antlr.BaseLexer
	channelNames []string
	modeNames    []string
	// TODO: EOF string
}

var PatternLexerLexerStaticData struct {
	once                   sync.Once
	serializedATN          []int32
	ChannelNames           []string
	ModeNames              []string
	LiteralNames           []string
	SymbolicNames          []string
	RuleNames              []string
	PredictionContextCache *antlr.PredictionContextCache
	atn                    *antlr.ATN
	decisionToDFA          []*antlr.DFA
}

func patternlexerLexerInit() {
	staticData := &PatternLexerLexerStaticData
	staticData.ChannelNames = []string{
		"DEFAULT_TOKEN_CHANNEL", "HIDDEN",
	}
	staticData.ModeNames = []string{
		"DEFAULT_MODE",
	}
	staticData.SymbolicNames = []string{
		"", "TERM", "WS", "BAD",
	}
	staticData.RuleNames = []string{
		"TERM", "WS", "BAD",
	}
	staticData.PredictionContextCache = antlr.NewPredictionContextCache()
	staticData.serializedATN = []int32{
		4, 0, 3, 24, 6, -1, 2, 0, 7, 0, 2, 1, 7, 1, 2, 2, 7, 2, 1, 0, 1, 0, 1,
		0, 3, 0, 11, 8, 0, 1, 1, 4, 1, 14, 8, 1, 11, 1, 12, 1, 15, 1, 1, 1, 1,
		1, 2, 4, 2, 21, 8, 2, 11, 2, 12, 2, 22, 0, 0, 3, 1, 1, 3, 2, 5, 3, 1, 0,
		4, 3, 0, 65, 65, 82, 82, 87, 87, 1, 0, 49, 50, 1, 0, 42, 43, 3, 0, 9, 10,
		13, 13, 32, 32, 26, 0, 1, 1, 0, 0, 0, 0, 3, 1, 0, 0, 0, 0, 5, 1, 0, 0,
		0, 1, 7, 1, 0, 0, 0, 3, 13, 1, 0, 0, 0, 5, 20, 1, 0, 0, 0, 7, 8, 7, 0,
		0, 0, 8, 10, 7, 1, 0, 0, 9, 11, 7, 2, 0, 0, 10, 9, 1, 0, 0, 0, 10, 11,
		1, 0, 0, 0, 11, 2, 1, 0, 0, 0, 12, 14, 7, 3, 0, 0, 13, 12, 1, 0, 0, 0,
		14, 15, 1, 0, 0, 0, 15, 13, 1, 0, 0, 0, 15, 16, 1, 0, 0, 0, 16, 17, 1,
		0, 0, 0, 17, 18, 6, 1, 0, 0, 18, 4, 1, 0, 0, 0, 19, 21, 8, 3, 0, 0, 20,
		19, 1, 0, 0, 0, 21, 22, 1, 0, 0, 0, 22, 20, 1, 0, 0, 0, 22, 23, 1, 0, 0,
		0, 23, 6, 1, 0, 0, 0, 4, 0, 10, 15, 22, 1, 6, 0, 0,
	}
	deserializer := antlr.NewATNDeserializer(nil)
	staticData.atn = deserializer.Deserialize(staticData.serializedATN)
	atn := staticData.atn
	staticData.decisionToDFA = make([]*antlr.DFA, len(atn.DecisionToState))
	decisionToDFA := staticData.decisionToDFA
	for index, state := range atn.DecisionToState {
		decisionToDFA[index] = antlr.NewDFA(state, index)
	}
}

// PatternLexerInit initializes any static state used to implement PatternLexer. By default the
// static state used to implement the lexer is lazily initialized during the first call to
// NewPatternLexer(). You can call this function if you wish to initialize the static state ahead
// of time.
func PatternLexerInit() {
	staticData := &PatternLexerLexerStaticData
	staticData.once.Do(patternlexerLexerInit)
}

// NewPatternLexer produces a new lexer instance for the optional input antlr.CharStream.
func NewPatternLexer(input antlr.CharStream) *PatternLexer {
	PatternLexerInit()
	l := new(PatternLexer)
	l.BaseLexer = antlr.NewBaseLexer(input)
	staticData := &PatternLexerLexerStaticData
	l.Interpreter = antlr.NewLexerATNSimulator(l, staticData.atn, staticData.decisionToDFA, staticData.PredictionContextCache)
	l.channelNames = staticData.ChannelNames
	l.modeNames = staticData.ModeNames
	l.RuleNames = staticData.RuleNames
	l.LiteralNames = staticData.LiteralNames
	l.SymbolicNames = staticData.SymbolicNames
	l.GrammarFileName = "Pattern.g4"
	// TODO: l.EOF = antlr.TokenEOF

	return l
}

// PatternLexer tokens.
const (
	PatternLexerTERM = 1
	PatternLexerWS   = 2
	PatternLexerBAD  = 3
)
