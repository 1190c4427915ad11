package report

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"
)

func TestProgressLine(t *testing.T) {
	p := NewProgress(nil, time.Now)
	tests := []struct {
		done, total, viol int
		elapsed           time.Duration
		want              string
	}{
		{0, 100, 0, 0, "[>                       ]   0/100 models  0 violations"},
		{25, 100, 1, 5 * time.Second, "[======>                 ]  25/100 models  1 violation  ETA 15s"},
		{99, 100, 3, 99 * time.Second, "[=======================>]  99/100 models  3 violations  ETA 1s"},
		{100, 100, 3, 100 * time.Second, "[========================] 100/100 models  3 violations"},
		{1, 3, 0, 1500 * time.Millisecond, "[========>               ] 1/3 models  0 violations  ETA 3s"},
		{0, 0, 0, 0, "[>                       ] 0/0 models  0 violations"},
	}
	for _, tt := range tests {
		if got := p.line(tt.done, tt.total, tt.viol, tt.elapsed); got != tt.want {
			t.Errorf("line(%d, %d, %d, %v) =\n%q, want\n%q", tt.done, tt.total, tt.viol, tt.elapsed, got, tt.want)
		}
	}
}

// TestProgressThrottle checks that updates within the interval are not
// drawn, except the last one, and that Done erases the bar.
func TestProgressThrottle(t *testing.T) {
	var buf bytes.Buffer
	now := time.Unix(1000, 0)
	p := NewProgress(&buf, func() time.Time { return now })
	start := now
	for i := 1; i <= 50; i++ {
		now = now.Add(10 * time.Millisecond) // 50 updates in 0.5s
		p.Update(i, 50, 0, start)
	}
	draws := strings.Count(buf.String(), "\r")
	if draws < 5 || draws > 7 {
		t.Errorf("%d redraws for 50 updates in 0.5s, want about 6 (at most 10/s plus the last)", draws)
	}
	if !strings.Contains(buf.String(), "50/50 models") {
		t.Errorf("last update not drawn: %q", buf.String())
	}
	buf.Reset()
	p.Done()
	if buf.String() != "\r\x1b[K" {
		t.Errorf("Done wrote %q, want an erased line", buf.String())
	}
	buf.Reset()
	p.Done()
	if buf.Len() != 0 {
		t.Errorf("second Done wrote %q", buf.String())
	}
}

func TestUseColor(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	var buf bytes.Buffer
	tests := []struct {
		mode    string
		getenv  func(string) string
		want    bool
		wantErr bool
	}{
		{ColorAlways, env(), true, false},
		{ColorAlways, env("NO_COLOR", "1"), true, false},
		{ColorNever, env(), false, false},
		{ColorAuto, env(), false, false}, // a buffer is not a terminal
		{"", env(), false, false},
		{"sometimes", env(), false, true},
	}
	for _, tt := range tests {
		got, err := UseColor(tt.mode, &buf, tt.getenv)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("UseColor(%q) = %v, %v; want %v, error %v", tt.mode, got, err, tt.want, tt.wantErr)
		}
	}
	// A file that is not a terminal.
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if IsTerminal(f) {
		t.Error("a regular file is a terminal")
	}
}

func TestReadingLine(t *testing.T) {
	p := NewProgress(nil, time.Now)
	const mb = 1 << 20
	tests := []struct {
		read, size int64
		elapsed    time.Duration
		want       string
	}{
		{0, 40 * mb, 0, "[>                       ] reading t.csv.gz  0/40 MB"},
		{10 * mb, 40 * mb, 2 * time.Second, "[======>                 ] reading t.csv.gz  10/40 MB  ETA 6s"},
		{40 * mb, 40 * mb, 8 * time.Second, "[========================] reading t.csv.gz  40/40 MB"},
		{mb / 2, mb + 1, time.Second, "[===========>            ] reading t.csv.gz  0/2 MB  ETA 1s"},
	}
	for _, tt := range tests {
		if got := p.readingLine("t.csv.gz", tt.read, tt.size, tt.elapsed); got != tt.want {
			t.Errorf("readingLine(%d, %d) =\n%q, want\n%q", tt.read, tt.size, got, tt.want)
		}
	}
}
