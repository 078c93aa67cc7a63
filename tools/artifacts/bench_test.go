package artifacts

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/files"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/storage/blob"
	"github.com/switchyardhq/switchyard/storage/sqlite"
	"github.com/switchyardhq/switchyard/tools"
)

// spreadsheetArgs are create_spreadsheet's arguments for a workbook of
// 10,000 order rows with three formulas each (amount, net of discount,
// share of the total) over three sheets: 30,000 formulas.
func spreadsheetArgs(b *testing.B) []byte {
	regions := []string{"North", "South", "East", "West"}
	type sheet struct {
		Name string  `json:"name"`
		Rows [][]any `json:"rows"`
	}
	var sheets []sheet
	for s, n := range []int{3_334, 3_333, 3_333} {
		sh := sheet{Name: "Orders " + strconv.Itoa(s+1), Rows: [][]any{{"Region", "Units", "Price", "Discount", "Amount", "Net", "Share"}}}
		for i := range n {
			r := strconv.Itoa(i + 2)
			sh.Rows = append(sh.Rows, []any{regions[i%4], 1 + i%97, "$" + strconv.Itoa(10+i%90) + ".99",
				strconv.Itoa(i%10) + "%", "=B" + r + "*C" + r, "=E" + r + "*(1-D" + r + ")", "=F" + r + "/F$" + strconv.Itoa(n+2)})
		}
		last := strconv.Itoa(n + 1)
		sh.Rows = append(sh.Rows, []any{"Total", "=SUM(B2:B" + last + ")", nil, nil, "=SUM(E2:E" + last + ")", "=SUM(F2:F" + last + ")", nil})
		sheets = append(sheets, sh)
	}
	args, err := json.Marshal(map[string]any{"title": "Orders", "sheets": sheets})
	if err != nil {
		b.Fatal(err)
	}
	return args
}

// BenchmarkCreateSpreadsheet10kRows is the whole tool step the gateway
// runs for create_spreadsheet: decoding the arguments, computing the
// 30,000 formulas, rendering, and storing the file. "stored" stores it as
// a node does, through the Files API (quota check, format check, the
// bytes into a blob directory with fsync, the metadata into SQLite);
// "in_memory" keeps it in a map, which leaves the rest alone.
func BenchmarkCreateSpreadsheet10kRows(b *testing.B) {
	args := spreadsheetArgs(b)
	stored, account := gatewayFiles(b)
	for _, bb := range []struct {
		name, account string
		files         FileStore
	}{{"stored", account, stored}, {"in_memory", "acct", &fakeFiles{}}} {
		b.Run(bb.name, func(b *testing.B) {
			tool := toolSetWith(b, bb.files)[tools.NameCreateSpreadsheet]
			b.SetBytes(int64(len(args)))
			b.ReportAllocs()
			var cpu time.Duration
			for b.Loop() {
				env := &tools.Env{AccountID: bb.account, IDs: &counter{}}
				start := cpuTime(b)
				execute(b, tool, args, env)
				cpu += cpuTime(b) - start
			}
			b.ReportMetric(float64(cpu.Microseconds())/1e3/float64(b.N), "cpu-ms/op")
		})
	}
}

// gatewayFiles is the Files API of a single node, metadata in SQLite and
// the bytes in a blob directory, with the quotas of revision A raised so
// that the benchmark's many files fit (they are still checked), and the
// id of an account to store for.
func gatewayFiles(b *testing.B) (*files.Service, string) {
	meta, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "switchyard.db"), storage.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { meta.Close() })
	blobs, err := blob.NewDir(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	profile := policy.ProfileFor(policy.RevisionA)
	profile.MaxStoredFiles, profile.MaxStoredBytes = 1<<30, 1<<50
	svc, err := files.NewService(files.Config{Meta: meta, Blobs: blobs, Profile: profile})
	if err != nil {
		b.Fatal(err)
	}
	acct, err := meta.EnsureAccount(b.Context(), "bench")
	if err != nil {
		b.Fatal(err)
	}
	return svc, acct.ID
}

// documentCall is create_document's arguments and objects for a report
// of about ten pages embedding three charts and a diagram that exist only
// as their sources, as they do in a conversation: the tool draws each of
// them again before it lays the document out.
func documentCall(b *testing.B) (args []byte, objects map[string]tools.ObjectRef) {
	objects = map[string]tools.ObjectRef{
		"obj1": {Kind: "chart", Title: "Units sold by product line", Source: `{"type":"bar","x_label":"Quarter","y_label":"Units sold",` +
			`"labels":["Q1 2025","Q2 2025","Q3 2025","Q4 2025"],"series":[{"name":"Laptops","values":[12400,13900,15100,18750]},` +
			`{"name":"Tablets","values":[8300,7900,8800,11200]},{"name":"Phones","values":[21000,22400,20100,26900]}]}`},
		"obj2": {Kind: "chart", Title: "Daily orders, two years", Source: `{"type":"line","x_label":"Month","y_label":"Orders per day","labels":[` +
			monthLabels() + `],"series":[{"name":"Web","values":[` + ramp(24, 1200, 40) + `]},{"name":"Stores","values":[` + ramp(24, 900, 15) + `]}]}`},
		"obj3": {Kind: "chart", Title: "Traffic sources", Source: `{"type":"pie","labels":["Organic search","Direct","Referral","Social","Email"],` +
			`"series":[{"name":"Visits","values":[48210,22950,11870,9340,6120]}]}`},
		"obj4": {Kind: "diagram", Title: "Customer onboarding", Source: `digraph onboarding {
  start [label="Contract signed", shape=oval]; kickoff [label="Kick-off call"]; sso [label="SSO configured?", shape=diamond];
  idp [label="Connect identity provider"]; invite [label="Invite admins"]; import [label="Import data"];
  valid [label="Data valid?", shape=diamond]; fix [label="Fix mapping"]; train [label="Train users"];
  pilot [label="Pilot with one team"]; review [label="Pilot review"]; rollout [label="Company-wide rollout"];
  done [label="Handover to support", shape=oval];
  start -> kickoff -> sso; sso -> idp [label="no"]; sso -> invite [label="yes"]; idp -> invite;
  invite -> import -> valid; valid -> fix [label="no"]; fix -> import [style=dashed];
  valid -> train [label="yes"]; train -> pilot -> review -> rollout -> done;
}`},
	}
	var md strings.Builder
	for i := 1; i <= 4; i++ {
		fmt.Fprintf(&md, "## Section %d\n\n", i)
		for range 12 {
			md.WriteString("Revenue grew in every region, led by **Enterprise** contracts and the new *annual* plans; margins improved as hosting costs fell. See [the note](https://example.com) and `query.sql` for details. ")
			md.WriteString(strings.Repeat("Further discussion of the drivers, risks and outlook follows here. ", 5) + "\n\n")
		}
		fmt.Fprintf(&md, "![Figure %d](obj%d)\n\n- first point\n- second point\n  - nested detail\n\n", i, i)
	}
	md.WriteString("| Region | Revenue | Growth |\n|---|---|---|\n")
	for i := range 40 {
		fmt.Fprintf(&md, "| Region %d | %d,%03d | %d.%d %% |\n", i, 10+i, i*7, i%20, i%10)
	}
	args, err := json.Marshal(map[string]string{"title": "Quarterly review", "markdown": md.String()})
	if err != nil {
		b.Fatal(err)
	}
	return args, objects
}

func monthLabels() string {
	var l []string
	for y := 2024; y <= 2025; y++ {
		for _, m := range []string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"} {
			l = append(l, strconv.Quote(m+" "+strconv.Itoa(y)))
		}
	}
	return strings.Join(l, ",")
}

func ramp(n, start, step int) string {
	v := make([]string, n)
	for i := range v {
		v[i] = strconv.Itoa(start + i*step + (i%5)*30)
	}
	return strings.Join(v, ",")
}

// BenchmarkCreateDocument3ChartsDiagram is the whole tool step the
// gateway runs for create_document with three charts and a diagram
// embedded from their sources, none of them drawn before in the process:
// decoding the arguments, drawing the four pictures, laying out the PDF
// and storing it (in memory here).
func BenchmarkCreateDocument3ChartsDiagram(b *testing.B) {
	args, objects := documentCall(b)
	b.ReportAllocs()
	var cpu time.Duration
	for b.Loop() {
		// New tools, so that no picture is left from the last round.
		set := toolSet(b)
		env := &tools.Env{AccountID: "acct", IDs: &counter{obj: 4}, Objects: maps.Clone(objects)}
		start := cpuTime(b)
		execute(b, set[tools.NameCreateDocument], args, env)
		cpu += cpuTime(b) - start
	}
	b.ReportMetric(float64(cpu.Microseconds())/1e3/float64(b.N), "cpu-ms/op")
}

// BenchmarkCreateDocumentStored is BenchmarkCreateDocument3ChartsDiagram
// with the PDF stored as a node stores it (gatewayFiles) instead of in
// memory: the whole tool step as the gateway runs it.
func BenchmarkCreateDocumentStored(b *testing.B) {
	args, objects := documentCall(b)
	stored, account := gatewayFiles(b)
	b.ReportAllocs()
	var cpu time.Duration
	for b.Loop() {
		set := toolSetWith(b, stored)
		env := &tools.Env{AccountID: account, IDs: &counter{obj: 4}, Objects: maps.Clone(objects)}
		start := cpuTime(b)
		execute(b, set[tools.NameCreateDocument], args, env)
		cpu += cpuTime(b) - start
	}
	b.ReportMetric(float64(cpu.Microseconds())/1e3/float64(b.N), "cpu-ms/op")
}

// BenchmarkCreateDocumentAfterItsPictures is the same step where the
// conversation made the charts and the diagram just before, as a model
// does: they are drawn by their create_* calls (not timed) and the
// document finds them drawn.
func BenchmarkCreateDocumentAfterItsPictures(b *testing.B) {
	args, objects := documentCall(b)
	b.ReportAllocs()
	var cpu time.Duration
	for b.Loop() {
		b.StopTimer()
		set := toolSet(b)
		env := &tools.Env{AccountID: "acct", IDs: &counter{}, Objects: map[string]tools.ObjectRef{}}
		for _, id := range []string{"obj1", "obj2", "obj3", "obj4"} {
			ref := objects[id]
			a := map[string]any{"title": ref.Title}
			name := tools.NameCreateChart
			if ref.Kind == "diagram" {
				name, a["source"] = tools.NameCreateDiagram, ref.Source
			} else {
				a["spec"] = json.RawMessage(ref.Source)
			}
			data, err := json.Marshal(a)
			if err != nil {
				b.Fatal(err)
			}
			execute(b, set[name], data, env)
		}
		b.StartTimer()
		start := cpuTime(b)
		execute(b, set[tools.NameCreateDocument], args, env)
		cpu += cpuTime(b) - start
	}
	b.ReportMetric(float64(cpu.Microseconds())/1e3/float64(b.N), "cpu-ms/op")
}

func toolSet(b *testing.B) map[string]tools.Tool {
	return toolSetWith(b, &fakeFiles{})
}

func toolSetWith(b *testing.B, f FileStore) map[string]tools.Tool {
	all, err := New(Config{Files: f})
	if err != nil {
		b.Fatal(err)
	}
	set := map[string]tools.Tool{}
	for _, t := range all {
		set[t.Name()] = t
	}
	return set
}

func execute(b *testing.B, tool tools.Tool, args []byte, env *tools.Env) {
	res, err := tool.Execute(context.Background(), tools.Call{Name: tool.Name(), Arguments: args, Env: env})
	if err != nil {
		b.Fatal(err)
	}
	if len(res.Artifacts) != 1 {
		b.Fatalf("%s: %d artifacts", tool.Name(), len(res.Artifacts))
	}
}

// cpuTime is the user and system time of this process so far: on a
// shared machine the wall time of a step says little, its CPU time more.
// The Graphviz worker's time is not in it.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
