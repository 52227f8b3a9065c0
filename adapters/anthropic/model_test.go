package agentidemanthropic_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
)

// The Messages API as a scripted model sees it: the conversation so far and
// the assistant turn it answers with. Only the fields the script reads.
type (
	apiRequest struct {
		Messages []apiMessage `json:"messages"`
	}
	apiMessage struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	apiBlock struct {
		Type      string          `json:"type"`
		ID        string          `json:"id,omitempty"`
		Name      string          `json:"name,omitempty"`
		Input     json.RawMessage `json:"input,omitempty"`
		Text      string          `json:"text,omitempty"`
		ToolUseID string          `json:"tool_use_id,omitempty"`
		IsError   bool            `json:"is_error,omitempty"`
	}
)

// blocks returns the content blocks of a message (none for a string).
func (m apiMessage) blocks() []apiBlock {
	var bs []apiBlock
	if json.Unmarshal(m.Content, &bs) != nil {
		return nil
	}
	return bs
}

// messagesAPI serves POST /v1/messages from script, which picks the next
// assistant turn from the conversation: tool_use blocks (the turn stops for
// tool use) or, when it returns none, a final text answer.
type messagesAPI struct {
	script func(conv []apiMessage) (calls []apiBlock, answer string)
	n      atomic.Int64
}

func (s *messagesAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		http.Error(w, `{"type":"error","error":{"type":"not_found_error","message":"not here"}}`, http.StatusNotFound)
		return
	}
	var req apiRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	calls, answer := s.script(req.Messages)
	turn := s.n.Add(1)
	stop := "end_turn"
	content := []apiBlock{{Type: "text", Text: answer}}
	if len(calls) > 0 {
		stop, content = "tool_use", nil
		for i, c := range calls {
			c.Type = "tool_use"
			c.ID = fmt.Sprintf("toolu_%d_%d", turn, i)
			content = append(content, c)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": fmt.Sprintf("msg_%d", turn), "type": "message", "role": "assistant",
		"model": "claude-scripted", "content": content, "stop_reason": stop,
		"stop_sequence": nil, "usage": map[string]int{"input_tokens": 1, "output_tokens": 1},
	})
}

// inProcess is an http.RoundTripper that serves every request with a
// handler in the calling goroutine: the SDK's real HTTP client, encoding and
// decoding, with no socket, so a testing/synctest bubble sees no I/O.
type inProcess struct{ h http.Handler }

func (t inProcess) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r)
	return rec.Result(), nil
}
