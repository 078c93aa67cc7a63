package billing

import (
	"bytes"
	"testing"

	"github.com/switchyardhq/switchyard/internal/testupstream"
)

// TestMeterReadsRecordedDialects meters every recorded backend answer
// (translator/upstream/testdata/dialects) as /v1 relays it: the bytes pass
// unchanged and the usage is read in whatever shape the backend reports
// it, or estimated when it reports none.
func TestMeterReadsRecordedDialects(t *testing.T) {
	for _, rec := range testupstream.Recordings(t) {
		t.Run(rec.File, func(t *testing.T) {
			m := NewMeter(false)
			m.Start(rec.ContentType + "; charset=utf-8")
			var out []byte
			for b := rec.Body; len(b) > 0; {
				n := min(len(b), 7) // pieces that split lines and events
				out = append(out, m.Write(b[:n])...)
				b = b[n:]
			}
			out = append(out, m.Close()...)
			if !bytes.Equal(out, rec.Body) {
				t.Fatalf("relayed bytes differ:\n%s\nwant\n%s", out, rec.Body)
			}
			u := m.Usage()
			if rec.Usage == nil {
				if !u.Estimated || u.Completion <= 0 {
					t.Fatalf("usage %+v, want an estimate", u)
				}
				return
			}
			if u.Estimated || u.Prompt != rec.Usage.Prompt || u.Completion != rec.Usage.Completion {
				t.Fatalf("usage %+v, want %+v as reported", u, *rec.Usage)
			}
		})
	}
}
