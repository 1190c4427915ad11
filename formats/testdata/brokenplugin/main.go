// Command brokenplugin is a deliberately broken trace-format plugin for the
// tests of package formats. What it does depends on the first word of the
// trace: crash (panics in Next), hang (never answers Next), malformed (an
// action code out of range), problem (a malformed line, bad input).
// Built with -ldflags "-X main.protocolVersion=99" it speaks another
// protocol version. With MCPREDICT_TEST_PIDFILE set it appends its pid.
package main

import (
	"bytes"
	"fmt"
	"net/rpc"
	"os"
	"strconv"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/mcpredict/mcpredict/formats/formatplugin"
)

var protocolVersion = "1"

type server struct{ mode string }

func (s *server) Info(_ formatplugin.Empty, r *formatplugin.Info) error {
	*r = formatplugin.Info{Name: "broken", Version: "0.0.1", Description: "broken on purpose", Extensions: []string{"broken"}}
	return nil
}

func (s *server) Detect(formatplugin.DetectArgs, *formatplugin.DetectReply) error { return nil }

func (s *server) Open(a formatplugin.OpenArgs, r *formatplugin.OpenReply) error {
	b, err := os.ReadFile(a.Path)
	if err != nil {
		return err
	}
	if f := bytes.Fields(b); len(f) > 0 {
		s.mode = string(f[0])
	}
	r.Session = 1
	return nil
}

func (s *server) Next(_ formatplugin.SessionArgs, r *formatplugin.Batch) error {
	switch s.mode {
	case "crash":
		panic("boom: the broken plugin crashed")
	case "hang":
		time.Sleep(time.Hour)
	case "malformed":
		*r = formatplugin.Batch{Strings: []string{"T1", "x"}, Recs: []int32{1, 99, 2, 0, 0, 0, 1}, Done: true}
	case "problem":
		*r = formatplugin.Batch{Strings: []string{"T1", "x", "bad event here"}, Recs: []int32{1, 1, 2, 0, 0, 0, 1, 0, 0, 3, 0, 0, 0, 2}, Done: true}
	default:
		*r = formatplugin.Batch{Done: true}
	}
	return nil
}

func (s *server) Close(formatplugin.SessionArgs, *formatplugin.Empty) error { return nil }

type rawPlugin struct{}

func (rawPlugin) Server(*plugin.MuxBroker) (any, error)              { return &server{}, nil }
func (rawPlugin) Client(*plugin.MuxBroker, *rpc.Client) (any, error) { return nil, nil }

func main() {
	if p := os.Getenv("MCPREDICT_TEST_PIDFILE"); p != "" {
		f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			fmt.Fprintln(f, os.Getpid())
			f.Close()
		}
	}
	hs := formatplugin.Handshake()
	v, _ := strconv.Atoi(protocolVersion)
	hs.ProtocolVersion = uint(v)
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: hs,
		Plugins:         plugin.PluginSet{formatplugin.PluginName: rawPlugin{}},
		Logger:          hclog.NewNullLogger(),
	})
}
