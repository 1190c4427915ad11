package service_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpredict/mcpredict/service"
)

// post sends a request and returns the status and the error message.
func post(t *testing.T, ctx context.Context, url, ctype, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", ctype)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var ae service.APIError
	b, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(b, &ae)
	return resp.StatusCode, ae.Error
}

func pathRequest(p string) string {
	b, _ := json.Marshal(service.SubmitRequest{Path: p})
	return string(b)
}

// TestServerSidePaths: a path outside the allowed directory gets the same
// answer whether it exists or not, symbolic links included; inside, a
// missing file is "no such file" and anything but a regular file is
// refused at once (a FIFO does not hang the request).
func TestServerSidePaths(t *testing.T) {
	base := t.TempDir()
	allowed := filepath.Join(base, "allowed")
	if err := os.Mkdir(allowed, 0o755); err != nil {
		t.Fatal(err)
	}
	e := start(t, service.Config{AllowPaths: []string{allowed}})
	ctx := ctxT(t, time.Minute)
	trace := mustRead(t, example)
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	secret := filepath.Join(base, "secret.csv") // outside, exists
	write(secret, trace)
	missing := filepath.Join(base, "missing.csv") // outside, does not exist
	write(filepath.Join(allowed, "good.csv"), trace)
	links := map[string]string{"to-secret": secret, "to-missing": missing, "to-good": "good.csv", "to-etc": "/etc"}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(allowed, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(allowed, "fifo.csv"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(allowed, "dir.csv"), 0o755); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", filepath.Join(allowed, "sock.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()

	submit := func(p string) (int, string) {
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second) // a hanging request fails here
		defer cancel()
		return post(t, rctx, e.hs.URL+"/v1/jobs", "application/json", pathRequest(p))
	}
	// Outside: one answer, existing or not, however the path gets there.
	pairs := [][2]string{
		{secret, missing},
		{filepath.Join(allowed, "..", "secret.csv"), filepath.Join(allowed, "..", "missing.csv")},
		{filepath.Join(allowed, "to-secret"), filepath.Join(allowed, "to-missing")},
		{filepath.Join(allowed, "to-etc", "passwd"), filepath.Join(allowed, "to-etc", "no-such-file")},
		{"/etc/passwd", "/etc/no-such-file"},
	}
	for _, p := range pairs {
		c1, m1 := submit(p[0])
		c2, m2 := submit(p[1])
		if c1 != http.StatusForbidden || c2 != c1 || strings.ReplaceAll(m1, p[0], "P") != strings.ReplaceAll(m2, p[1], "P") {
			t.Errorf("existing %s: %d %q; missing %s: %d %q; want the same 403", p[0], c1, m1, p[1], c2, m2)
		}
		if strings.Contains(m1, "no such") || strings.Contains(m1, "lstat") {
			t.Errorf("%s: message reveals the file system: %q", p[0], m1)
		}
	}
	// Inside.
	for _, tt := range []struct {
		name string
		code int
		msg  string
	}{
		{"nothing.csv", 400, "no such file"},
		{"fifo.csv", 400, "a FIFO, not a regular file"},
		{"dir.csv", 400, "a directory, not a regular file"},
		{"sock.csv", 400, "a socket, not a regular file"},
		{"to-good", 202, ""},
		{"good.csv", 202, ""},
	} {
		code, msg := submit(filepath.Join(allowed, tt.name))
		if code != tt.code || !strings.Contains(msg, tt.msg) {
			t.Errorf("%s: %d %q, want %d %q", tt.name, code, msg, tt.code, tt.msg)
		}
	}
	// A device, when this user may create one.
	if os.Getuid() == 0 {
		dev := filepath.Join(allowed, "null.csv")
		if err := syscall.Mknod(dev, syscall.S_IFCHR|0o666, 1<<8|3); err == nil {
			if code, msg := submit(dev); code != 400 || !strings.Contains(msg, "a device, not a regular file") {
				t.Errorf("device: %d %q", code, msg)
			}
		}
	}
}

// TestTrailingJSON: a JSON request with data after the value is refused.
func TestTrailingJSON(t *testing.T) {
	e := start(t, service.Config{AllowPaths: []string{"../examples"}})
	ctx := ctxT(t, time.Minute)
	req := pathRequest(example)
	for _, tt := range []struct {
		name, ctype, body string
		code              int
	}{
		{"garbage after", "application/json", req + "x", 400},
		{"second value", "application/json", req + req, 400},
		{"second value after a newline", "application/json", req + "\n{}", 400},
		{"white space after", "application/json", req + " \n\t", 202},
		{"multipart options with data after", "multipart/form-data; boundary=X",
			"--X\r\nContent-Disposition: form-data; name=\"options\"\r\n\r\n{\"patterns\":[\"P1\"]} []\r\n" +
				"--X\r\nContent-Disposition: form-data; name=\"trace\"; filename=\"t.csv\"\r\n\r\n" + mustRead(t, example) + "\r\n--X--\r\n", 400},
	} {
		code, msg := post(t, ctx, e.hs.URL+"/v1/jobs", tt.ctype, tt.body)
		if code != tt.code || (code == 400 && !strings.Contains(msg, "data after the JSON value")) {
			t.Errorf("%s: %d %q, want %d", tt.name, code, msg, tt.code)
		}
	}
}

// TestStalledBody: a client that stops sending its body is cut off after
// the idle timeout with 408; one that keeps sending, slowly, for longer
// than that, is not.
func TestStalledBody(t *testing.T) {
	const idle = 300 * time.Millisecond
	e := start(t, service.Config{BodyIdleTimeout: idle})
	trace := mustRead(t, example)
	addr := strings.TrimPrefix(e.hs.URL, "http://")

	// Slow loris: headers and a few bytes, then nothing.
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s", len(trace), trace[:10])
	began := time.Now()
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(b), "stalled") {
		t.Errorf("stalled body: %d %s", resp.StatusCode, b)
	}
	if d := time.Since(began); d > 5*idle {
		t.Errorf("cut off after %s, want about %s", d, idle)
	}

	// Slow but steady: a chunk every idle/3, over several idle periods.
	pr, pw := io.Pipe()
	go func() {
		chunk := (len(trace) + 7) / 8
		for i := 0; i < len(trace); i += chunk {
			time.Sleep(idle / 3)
			if _, err := pw.Write([]byte(trace[i:min(i+chunk, len(trace))])); err != nil {
				return
			}
		}
		pw.Close()
	}()
	ctx := ctxT(t, time.Minute)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.hs.URL+"/v1/jobs", pr)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Errorf("slow steady upload: %d %s", resp.StatusCode, b)
	}
}
