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
		"TERM", "VARIABLE", "WS", "BAD",
	}
	staticData.PredictionContextCache = antlr.NewPredictionContextCache()
	staticData.serializedATN = []int32{
		4, 0, 3, 33, 6, -1, 2, 0, 7, 0, 2, 1, 7, 1, 2, 2, 7, 2, 2, 3, 7, 3, 1,
		0, 1, 0, 1, 0, 3, 0, 13, 8, 0, 1, 0, 3, 0, 16, 8, 0, 1, 1, 1, 1, 1, 1,
		1, 1, 1, 2, 4, 2, 23, 8, 2, 11, 2, 12, 2, 24, 1, 2, 1, 2, 1, 3, 4, 3, 30,
		8, 3, 11, 3, 12, 3, 31, 0, 0, 4, 1, 1, 3, 0, 5, 2, 7, 3, 1, 0, 5, 3, 0,
		65, 65, 82, 82, 87, 87, 1, 0, 49, 50, 1, 0, 42, 43, 1, 0, 120, 121, 3,
		0, 9, 10, 13, 13, 32, 32, 35, 0, 1, 1, 0, 0, 0, 0, 5, 1, 0, 0, 0, 0, 7,
		1, 0, 0, 0, 1, 9, 1, 0, 0, 0, 3, 17, 1, 0, 0, 0, 5, 22, 1, 0, 0, 0, 7,
		29, 1, 0, 0, 0, 9, 10, 7, 0, 0, 0, 10, 12, 7, 1, 0, 0, 11, 13, 3, 3, 1,
		0, 12, 11, 1, 0, 0, 0, 12, 13, 1, 0, 0, 0, 13, 15, 1, 0, 0, 0, 14, 16,
		7, 2, 0, 0, 15, 14, 1, 0, 0, 0, 15, 16, 1, 0, 0, 0, 16, 2, 1, 0, 0, 0,
		17, 18, 5, 40, 0, 0, 18, 19, 7, 3, 0, 0, 19, 20, 5, 41, 0, 0, 20, 4, 1,
		0, 0, 0, 21, 23, 7, 4, 0, 0, 22, 21, 1, 0, 0, 0, 23, 24, 1, 0, 0, 0, 24,
		22, 1, 0, 0, 0, 24, 25, 1, 0, 0, 0, 25, 26, 1, 0, 0, 0, 26, 27, 6, 2, 0,
		0, 27, 6, 1, 0, 0, 0, 28, 30, 8, 4, 0, 0, 29, 28, 1, 0, 0, 0, 30, 31, 1,
		0, 0, 0, 31, 29, 1, 0, 0, 0, 31, 32, 1, 0, 0, 0, 32, 8, 1, 0, 0, 0, 5,
		0, 12, 15, 24, 31, 1, 6, 0, 0,
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
