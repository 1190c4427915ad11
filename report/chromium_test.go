package report_test

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/ltl"
	"github.com/mcpredict/mcpredict/report"
)

// chromium finds a headless-capable Chromium: $MCPREDICT_CHROMIUM, then
// Debian's chromium.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("MCPREDICT_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("chromium is not installed: apt-get install chromium (scripts/setup.sh does it unless MCPREDICT_SETUP_BROWSER=0)")
	return ""
}

// runChromium runs headless Chromium on a local file with the network and
// every background service off, and returns its standard output.
func runChromium(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	base := []string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-extensions", "--disable-dev-shm-usage",
		"--user-data-dir=" + t.TempDir(),
	}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", bin, err, stderr.Bytes())
	}
	return stdout.Bytes()
}

// TestHTMLInChromium loads each example report in a real browser: the DOM
// it builds must have one swimlane diagram per bug, in the order of the
// groups (bugs.Groups) and of their bugs, each with one numbered badge per
// access of the instance, one summary row per group, and the page must
// render to a non-blank screenshot.
func TestHTMLInChromium(t *testing.T) {
	bin := chromium(t)
	dir := t.TempDir()
	svgRE := regexp.MustCompile(`<svg class="swimlane"[^>]*data-bug="([^"]+)"`)
	for _, name := range append(exampleNames(), "racy_counter_100") {
		t.Run(name, func(t *testing.T) {
			var rep *bugs.Report
			if name == "racy_counter_100" { // one group of hundreds of bugs
				rep = predictTrace(t, racyCounter, racyCounter)
			} else {
				rep = predictExample(t, name)
			}
			page := filepath.Join(dir, name+".html")
			f, err := os.Create(page)
			if err != nil {
				t.Fatal(err)
			}
			err = report.WriteHTML(f, rep, report.Options{Patterns: ltl.Builtin(), SrcRoot: "testdata/src"})
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				t.Fatal(err)
			}
			url := "file://" + filepath.ToSlash(page)

			dom := string(runChromium(t, bin, "--dump-dom", url))
			if !strings.Contains(dom, `id="verdict"`) {
				t.Fatalf("the browser did not build the page; DOM:\n%.2000s", dom)
			}
			groups := bugs.Groups(rep.Active())
			var active []bugs.Bug
			for _, g := range groups {
				active = append(active, g.Members...)
			}
			var got []string
			for _, m := range svgRE.FindAllStringSubmatch(dom, -1) {
				got = append(got, m[1])
			}
			if len(got) != len(active) {
				t.Fatalf("DOM has %d diagrams %v, want one per bug (%d)", len(got), got, len(active))
			}
			// Each diagram's part of the DOM: from its <svg> to the next.
			parts := strings.Split(dom, `<svg class="swimlane"`)[1:]
			for i, b := range active {
				if got[i] != b.ID {
					t.Errorf("diagram %d is of bug %s, want %s", i, got[i], b.ID)
				}
				svg := parts[i][:strings.Index(parts[i], "</svg>")]
				v := rep.Violations[b.Instances[0]]
				if n := strings.Count(svg, `<g class="badge">`); n != len(v.Accesses) {
					t.Errorf("bug %s: %d highlighted accesses, want %d", b.ID, n, len(v.Accesses))
				}
				if n := strings.Count(svg, `<g class="ev `); n != len(v.Interleaving) {
					t.Errorf("bug %s: %d steps drawn, want %d", b.ID, n, len(v.Interleaving))
				}
				if n := strings.Count(svg, `class="lane-bg"`); n != 2 {
					t.Errorf("bug %s: %d lanes, want 2", b.ID, n)
				}
			}
			if rows := strings.Count(dom, `<a class="mono" href="#GR-`); rows != len(groups) {
				t.Errorf("summary table has %d rows, want one per group (%d)", rows, len(groups))
			}
			more := 0 // disclosures of the bugs of a group after the first
			for _, g := range groups {
				if len(g.Members) > report.FirstShown {
					more++
				}
			}
			if n := strings.Count(dom, `<details class="more">`); n != more {
				t.Errorf("%d disclosures of more bugs, want %d", n, more)
			}

			shot := filepath.Join(dir, name+".png")
			runChromium(t, bin, "--screenshot="+shot, "--window-size=1200,900", "--hide-scrollbars", url)
			checkScreenshot(t, shot)
		})
	}
}

// checkScreenshot decodes the PNG and checks that something was drawn: a
// blank or error page has very few colors.
func checkScreenshot(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	b := img.Bounds()
	if b.Dx() != 1200 || b.Dy() != 900 {
		t.Errorf("screenshot is %dx%d, want 1200x900", b.Dx(), b.Dy())
	}
	colors := map[[4]uint32]bool{}
	for y := b.Min.Y; y < b.Max.Y; y += 3 {
		for x := b.Min.X; x < b.Max.X; x += 3 {
			r, g, bl, a := img.At(x, y).RGBA()
			colors[[4]uint32{r, g, bl, a}] = true
		}
	}
	if len(colors) < 20 {
		t.Errorf("screenshot has %d colors: the page looks blank", len(colors))
	}
}
