// Package toolstest holds what the tests of the tools share: a progress
// sink that records what a call reports, and the reading of testdata.
package toolstest

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/switchyardhq/switchyard/translator/wire"
)

// Progress is a tools.ProgressSink that records the rows a call reports,
// from any goroutine of the tool. Read Steps and Data once the call has
// returned.
type Progress struct {
	mu    sync.Mutex
	Steps []wire.Step
	Data  []wire.StepData
}

func (p *Progress) Step(s wire.Step) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.Steps = append(p.Steps, s)
}

func (p *Progress) StepData(d wire.StepData) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.Data = append(p.Data, d)
}

// Statuses lists the steps as "sid:status", space-separated, in the order
// reported.
func (p *Progress) Statuses() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]string, len(p.Steps))
	for i, s := range p.Steps {
		out[i] = s.SID + ":" + s.Status
	}
	return strings.Join(out, " ")
}

// Testdata returns the content of testdata/name in the package under
// test.
func Testdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
