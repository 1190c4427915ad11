package main

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestSubmitStatusHelp: the flags that submit -h and status -h mention are
// their own, or named as another command's ("mcpredict serve --flag").
func TestSubmitStatusHelp(t *testing.T) {
	other := regexp.MustCompile(`mcpredict (serve|status|batch|submit|reproduce)((?: --?[a-z][a-z0-9-]*(?: [A-Z]+)?)+)`)
	for _, tt := range []struct {
		cmd    string
		listed []string
	}{
		{"submit", []string{"server", "token-file", "reproduce", "reproduce-budget", "wait", "on-server", "name", "engine", "vars", "input-format", "json"}},
		{"status", []string{"server", "token-file", "report", "state", "limit", "json"}},
	} {
		t.Run(tt.cmd, func(t *testing.T) {
			help := helpOf(t, tt.cmd)
			listed := listedFlags(help)
			for _, f := range tt.listed {
				if !slices.Contains(listed, f) {
					t.Errorf("-h does not list -%s", f)
				}
			}
			others := map[string]bool{}
			for _, m := range other.FindAllStringSubmatch(strings.Join(strings.Fields(help), " "), -1) {
				if m[1] != tt.cmd {
					for _, w := range flagWord.FindAllStringSubmatch(m[2], -1) {
						others[w[1]] = true
					}
				}
			}
			for _, m := range flagWord.FindAllStringSubmatch(help, -1) {
				if f := m[1]; !strings.HasSuffix(f, "-") && !slices.Contains(listed, f) && !others[f] {
					t.Errorf("-h mentions --%s, which %s does not accept", f, tt.cmd)
				}
			}
		})
	}
}
