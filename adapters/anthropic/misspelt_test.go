package agentidemanthropic_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	agentidemanthropic "github.com/agentidem/agentidem-go/adapters/anthropic"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/toolrunner"
)

// hotel books a room once: a second booking of a booked room is answered
// "booked" and changes nothing.
type hotel struct {
	mu     sync.Mutex
	booked map[string]string // room -> guest
}

type bookIn struct {
	Room  string `json:"room" jsonschema:"required"`
	Guest string `json:"guest" jsonschema:"required"`
}

func (h *hotel) book(_ context.Context, in bookIn) (anthropic.BetaToolResultBlockParamContentUnion, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.booked[in.Room]; !ok {
		h.booked[in.Room] = in.Guest
	}
	return anthropic.BetaToolResultBlockParamContentUnion{OfText: &anthropic.BetaTextBlockParam{Text: "booked"}}, nil
}

func (h *hotel) find(_ context.Context, in bookIn) (anthropic.BetaToolResultBlockParamContentUnion, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return anthropic.BetaToolResultBlockParamContentUnion{OfText: &anthropic.BetaTextBlockParam{Text: "guest: " + h.booked[in.Room]}}, nil
}

func (h *hotel) snapshot() any {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]string, 0, len(h.booked))
	for r, g := range h.booked {
		out = append(out, r+":"+g)
	}
	slices.Sort(out)
	return out
}

// bookingSuite runs the suite of an agent whose model looks room A up
// (find_room, a traced read), then books it once (book_room, described
// under the key key).
func bookingSuite(t *testing.T, key string) *runtime.Report {
	var h *hotel
	script := func(conv []apiMessage) ([]apiBlock, string) {
		switch _, done, _ := readConversation(conv); {
		case !done["find_room"]:
			return []apiBlock{{Name: "find_room", Input: json.RawMessage(`{"room":"A","guest":"ann"}`)}}, ""
		case !done["book_room"]:
			return []apiBlock{{Name: "book_room", Input: json.RawMessage(`{"room":"A","guest":"ann"}`)}}, ""
		}
		return nil, "Room A is booked."
	}
	agent := func(ctx context.Context) error {
		book, err := toolrunner.NewBetaToolFromJSONSchema("book_room", "book a room", h.book)
		if err != nil {
			return err
		}
		find, err := toolrunner.NewBetaToolFromJSONSchema("find_room", "say who has a room", h.find)
		if err != nil {
			return err
		}
		client := anthropic.NewClient(option.WithAPIKey("test-key"), option.WithBaseURL("http://model.test/"), option.WithMaxRetries(0),
			option.WithHTTPClient(&http.Client{Transport: inProcess{&messagesAPI{script: script}}}))
		runner := client.Beta.Messages.NewToolRunner(agentidemanthropic.Wrap(agentidemanthropic.Tools{
			"find_room": agentidemanthropic.Read(agentidemanthropic.Entity("room")),
			key:         agentidemanthropic.Write(agentidemanthropic.Identity("room")),
		}, []anthropic.BetaTool{find, book}), anthropic.BetaToolRunnerParams{
			BetaMessageNewParams: anthropic.BetaMessageNewParams{
				Model: "claude-scripted", MaxTokens: 1024,
				Messages: []anthropic.BetaMessageParam{anthropic.NewBetaUserMessage(anthropic.NewBetaTextBlock("Book A for ann."))},
			},
			MaxIterations: 10, DisableThread: true,
		})
		_, err = runner.RunToCompletion(ctx)
		return err
	}
	return checked(t, testkit.Run(t, agent,
		testkit.Setup(func(context.Context) error { h = &hotel{booked: map[string]string{}}; return nil }),
		testkit.State(func() any { return h.snapshot() })))
}

// A spec keyed "bookRoom" for the tool book_room left the tool untraced,
// and with find_room traced, the suite passed an agent whose write it
// never faulted ("baseline ok, 2 duplicate deliveries", SAFE, no word of
// the key: the red team's adapters/anthropic/rtl/retry429). Wrap now panics on
// it, in the agent, and the suite fails naming the key and the tool.
func TestMisspeltKeyFailsTheSuite(t *testing.T) {
	rep := bookingSuite(t, "bookRoom")
	if rep.Safe {
		t.Fatalf("a suite whose spec names no tool passed as safe")
	}
	const want = `"bookRoom" names no tool (did you mean "book_room"?)`
	found := false
	for _, f := range rep.Errors() {
		if strings.Contains(f.Message, want) {
			found = true
		}
	}
	if !found {
		t.Errorf("no error finding says %s; findings: %v", want, rep.Errors())
	}

	// Spelt right, the tool is traced, faulted, and found safe.
	rep = bookingSuite(t, "book_room")
	if !rep.Safe || rep.FaultCount == 0 {
		t.Errorf("spelt right: safe %v, %d fault scenarios; errors %v", rep.Safe, rep.FaultCount, rep.Errors())
	}
}

func TestWrapPanicsOnAMisspeltKey(t *testing.T) {
	book, err := toolrunner.NewBetaToolFromJSONSchema("book_room", "book a room", (&hotel{}).book)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		const want = `agentidemanthropic: Wrap: Tools key "bookRoom" names no tool (did you mean "book_room"?)`
		if v, _ := recover().(string); !strings.HasPrefix(v, want) {
			t.Errorf("Wrap panicked with %q, want prefix %q", v, want)
		}
	}()
	agentidemanthropic.Wrap(agentidemanthropic.Tools{"bookRoom": agentidemanthropic.Write()}, []anthropic.BetaTool{book})
}
