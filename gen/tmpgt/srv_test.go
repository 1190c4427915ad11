package gt

import (
	"bytes"
	"context"
	"testing"
	"fmt"
	"os"

	"github.com/mcpredict/mcpredict/gen"
	"github.com/mcpredict/mcpredict/tracemodel"
	"github.com/mcpredict/mcpredict/predict"
	"github.com/mcpredict/mcpredict/bugs"
)

func TestSrv(t *testing.T) {
	ctx := context.Background()
	for _, c := range []gen.Config{{Kind: "fft", Threads: 3, Vars: 6, Phases: 3}, {Kind: "server", Threads: 3, Phases: 3, Bugs: 5}} {
		var b bytes.Buffer
		st, err := gen.Write(ctx, &b, c)
		if err != nil { t.Fatal(err) }
		fmt.Println(st)
		os.WriteFile("/tmp/gt/"+c.Kind+".csv", b.Bytes(), 0o644)
		m, err := tracemodel.Parse(ctx, &b, "x", tracemodel.Options{})
		if err != nil { t.Fatal(err) }
		rep, err := predict.Run(ctx, m, predict.Options{Engine: predict.EngineNative})
		if err != nil { t.Fatal(err) }
		bugs.WriteText(os.Stdout, rep)
	}
}
