package upstream

import "testing"

// A conversation takes its first messages over without a copy, and what
// is appended later never lands in the room the caller's slice had
// spare.
func TestNewConversationKeepsTheCallersSpareRoom(t *testing.T) {
	ms := make([]Message, 1, 4)
	ms[0] = Message{Role: "system", Content: "Be brief.\nAlways."}
	c := NewConversation(ms...)
	c.Append(Message{Role: "user", Content: "hi"})
	if spare := ms[:2][1]; spare.Role != "" {
		t.Errorf("Append wrote into the caller's spare room: %+v", spare)
	}
	want := `[{"role":"system","content":"Be brief.\nAlways."},{"role":"user","content":"hi"}]`
	if got := string(c.JSON()); got != want || c.Len() != 2 {
		t.Errorf("conversation = %s (%d messages), want %s", got, c.Len(), want)
	}
}
