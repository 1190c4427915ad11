package jsonl

import "strings"

// parseFast decodes the common event line — one flat object whose values
// are strings without escapes, numbers, true, false or null — without
// encoding/json, which made the jsonl plugin three times slower than the
// CSV reader. It reports false for anything else (escapes, nested values,
// a key that differs from a field name only in case, malformed text), and
// Parse then decodes the line with encoding/json: the result is the same
// either way (TestFastMatchesJSON).
func parseFast(line []byte) (Event, bool) {
	var e Event
	s := line
	i := skipSpace(s, 0)
	if i >= len(s) || s[i] != '{' {
		return e, false
	}
	i = skipSpace(s, i+1)
	if i < len(s) && s[i] == '}' {
		return e, skipSpace(s, i+1) == len(s)
	}
	for {
		key, j, ok := plainString(s, i)
		if !ok {
			return e, false
		}
		i = skipSpace(s, j)
		if i >= len(s) || s[i] != ':' {
			return e, false
		}
		i = skipSpace(s, i+1)
		if i >= len(s) {
			return e, false
		}
		var val []byte
		isString, isNull := false, false
		switch c := s[i]; {
		case c == '"':
			v, j, ok := plainString(s, i)
			if !ok {
				return e, false
			}
			val, i, isString = v, j, true
		case c == '-' || c >= '0' && c <= '9':
			j := i + 1
			for j < len(s) && strings.IndexByte("0123456789.eE+-", s[j]) >= 0 {
				j++
			}
			if !validNumber(s[i:j]) {
				return e, false
			}
			val, i = s[i:j], j
		case hasWord(s, i, "null"):
			i, isNull = i+4, true
		case hasWord(s, i, "true"), hasWord(s, i, "false"):
			if field(key) != "" {
				return e, false // a boolean for a field: encoding/json's error
			}
			if s[i] == 't' {
				i += 4
			} else {
				i += 5
			}
		default:
			return e, false // an object, an array or garbage
		}
		switch f := field(key); {
		case f == "" && isKnownFold(key):
			return e, false // encoding/json matches field names case-insensitively
		case f == "" || isNull:
			// another field, or null (which leaves a field as it is)
		case f == "thread" || f == "object" || f == "object2":
			t := Token(val)
			switch f {
			case "thread":
				e.Thread = t
			case "object":
				e.Object = t
			default:
				e.Object2 = t
			}
		case f == "action" || f == "file":
			if !isString {
				return e, false
			}
			if f == "action" {
				e.Action = string(val)
			} else {
				e.File = string(val)
			}
		case f == "line":
			n, ok := plainInt(val)
			if isString || !ok {
				return e, false
			}
			e.Line = n
		}
		i = skipSpace(s, i)
		if i >= len(s) {
			return e, false
		}
		if s[i] == '}' {
			return e, skipSpace(s, i+1) == len(s)
		}
		if s[i] != ',' {
			return e, false
		}
		i = skipSpace(s, i+1)
	}
}

var fieldNames = [...]string{"thread", "action", "object", "object2", "file", "line"}

// field returns the field a key names exactly, "" if none.
func field(key []byte) string {
	for _, f := range fieldNames {
		if string(key) == f {
			return f
		}
	}
	return ""
}

func isKnownFold(key []byte) bool {
	for _, f := range fieldNames {
		if strings.EqualFold(string(key), f) {
			return true
		}
	}
	return false
}

func skipSpace(s []byte, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// plainString reads a string at s[i] (a quote) without escapes or control
// characters and returns its bytes and the index after it.
func plainString(s []byte, i int) ([]byte, int, bool) {
	if i >= len(s) || s[i] != '"' {
		return nil, 0, false
	}
	for j := i + 1; j < len(s); j++ {
		switch c := s[j]; {
		case c == '"':
			return s[i+1 : j], j + 1, true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return nil, 0, false // escapes and non-ASCII (UTF-8 validation): encoding/json
		}
	}
	return nil, 0, false
}

func hasWord(s []byte, i int, w string) bool {
	return len(s)-i >= len(w) && string(s[i:i+len(w)]) == w
}

// validNumber checks the JSON number grammar.
func validNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == start {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == start {
			return false
		}
	}
	return i == len(b)
}

// plainInt parses an integer without fraction or exponent that fits an int
// of 32 bits (larger lines: encoding/json decides).
func plainInt(b []byte) (int, bool) {
	neg := false
	if len(b) > 0 && b[0] == '-' {
		neg, b = true, b[1:]
	}
	if len(b) == 0 || len(b) > 9 {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}
