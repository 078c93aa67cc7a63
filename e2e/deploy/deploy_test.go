// Package deploy checks the deployment artefacts under deploy/ without a
// service manager or a container engine: the systemd unit (with
// systemd-analyze where it is installed), and the container image run
// around the real gateway. deploy/image's own tests read the image back
// file by file.
package deploy

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const unitPath = "../../deploy/systemd/switchyard.service"

// unitDirectives reads a unit file's [Service] directives; a directive
// given more than once keeps every value.
func unitDirectives(t *testing.T, path string) map[string][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]string{}
	section := ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
		case line[0] == '[':
			if !strings.HasSuffix(line, "]") {
				t.Fatalf("%s:%d: unclosed section %q", path, n, line)
			}
			section = line
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || section == "" {
				t.Fatalf("%s:%d: not a directive in a section: %q", path, n, line)
			}
			if section == "[Service]" {
				out[k] = append(out[k], v)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestSystemdUnitSandbox(t *testing.T) {
	d := unitDirectives(t, unitPath)
	want := map[string]string{
		"DynamicUser":             "yes",
		"NoNewPrivileges":         "yes",
		"ProtectSystem":           "strict",
		"ProtectHome":             "yes",
		"PrivateTmp":              "yes",
		"StateDirectory":          "switchyard",
		"CapabilityBoundingSet":   "CAP_NET_BIND_SERVICE",
		"AmbientCapabilities":     "CAP_NET_BIND_SERVICE",
		"RestrictSUIDSGID":        "yes",
		"SystemCallArchitectures": "native",
		"EnvironmentFile":         "/etc/switchyard/switchyard.env",
		"Environment":             "SWITCHYARD_DATA_DIR=/var/lib/switchyard",
	}
	for k, v := range want {
		found := false
		for _, got := range d[k] {
			found = found || got == v
		}
		if !found {
			t.Errorf("%s=%s missing (have %q)", k, v, d[k])
		}
	}
	if got := d["SystemCallFilter"]; len(got) == 0 || got[0] != "@system-service" {
		t.Errorf("SystemCallFilter starts %q, want @system-service", got)
	}
	if exec := d["ExecStart"]; len(exec) != 1 || !strings.HasPrefix(exec[0], "/usr/local/bin/switchyard run ") ||
		strings.Contains(exec[0], "--environ") {
		// --environ would print the secrets of the environment file
		// into the journal.
		t.Errorf("ExecStart %q", exec)
	}
}

// TestSystemdAnalyzeVerify has systemd read the unit as it would load
// it. The binary path is swapped for one that exists here, since verify
// refuses a missing executable; everything else is the shipped unit.
func TestSystemdAnalyzeVerify(t *testing.T) {
	tool, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed; TestSystemdUnitSandbox still checks the unit")
	}
	b, err := os.ReadFile(unitPath)
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	unit := strings.ReplaceAll(string(b), "/usr/local/bin/switchyard", self)
	path := filepath.Join(t.TempDir(), "switchyard.service")
	if err := os.WriteFile(path, []byte(unit), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(t.Context(), tool, "verify", "--man=no", path).CombinedOutput()
	// verify exits 0 for directives it ignores as unknown or unparsable,
	// and only says so: any line about the unit is a failure.
	var complaints []string
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "switchyard.service") {
			complaints = append(complaints, line)
		}
	}
	if err != nil || len(complaints) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}
