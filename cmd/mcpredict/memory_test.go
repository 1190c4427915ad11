package main

import "testing"

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"512", 512, true}, {"512B", 512, true},
		{"64K", 64 << 10, true}, {"64KiB", 64 << 10, true}, {"256MiB", 256 << 20, true},
		{"256mb", 256 << 20, true}, {"1GiB", 1 << 30, true}, {"2 G", 2 << 30, true}, {"1TiB", 1 << 40, true},
		{"12XB", 0, false}, {"GiB", 0, false}, {"-1GiB", 0, false}, {"1.5GiB", 0, false},
		{"99999999TiB", 0, false},
	} {
		got, err := parseSize(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d, ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
	var f sizeFlag
	if err := f.Set("768MiB"); err != nil || f.String() != "768MiB" {
		t.Errorf("sizeFlag: %v %s", err, f.String())
	}
}
