package conflict

import (
	"bufio"
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/mcpredict/mcpredict/gen"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// phases rewrites a gen fft trace so that each worker's barrier phase is
// a Begin/End transaction (End before its BarrierWait, Begin before its
// next event), as the README's side-by-side with RAPID does.
func phases(data []byte) []byte {
	var out bytes.Buffer
	open := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		f := strings.Split(line, ", ")
		if strings.HasPrefix(line, "#") || len(f) < 4 {
			continue
		}
		t := f[0]
		if t != "main" && !open[t] {
			out.WriteString(t + ", 0, fft.c:0, Begin, phase\n")
			open[t] = true
		}
		if t != "main" && f[3] == "BarrierWait" {
			out.WriteString(t + ", 0, fft.c:0, End, phase\n")
			open[t] = false
		}
		out.WriteString(line + "\n")
	}
	return out.Bytes()
}

// BenchmarkAnalyze measures the check after parsing, in events/s, on the
// 1M-event fft-like trace of `mcpredict gen --kind fft --threads 4 --vars
// 2000 --events 1000000` (no transactions: every event is a unary one)
// and on the same trace with every worker's barrier phase a transaction.
func BenchmarkAnalyze(b *testing.B) {
	var buf bytes.Buffer
	if _, err := gen.Write(context.Background(), &buf, gen.Config{Kind: gen.KindFFT, Threads: 4, Vars: 2000, Events: 1_000_000}); err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		data []byte
	}{{"fft", buf.Bytes()}, {"fft-phases", phases(buf.Bytes())}} {
		m, err := tracemodel.Parse(context.Background(), bytes.NewReader(tc.data), "fft.csv", tracemodel.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(tc.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				vs, st, err := Analyze(context.Background(), m, Options{})
				if err != nil || len(vs) != 0 {
					b.Fatalf("%v %v", vs, err)
				}
				if tc.name == "fft-phases" && st.Txns == 0 {
					b.Fatal("no transactions")
				}
			}
			b.ReportMetric(float64(len(m.Events))*float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
