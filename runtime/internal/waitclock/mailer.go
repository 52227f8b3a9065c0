package waitclock

import (
	"strconv"
	"sync"
	"time"
)

// Mailer schedules reminder mails, each sent by a time.AfterFunc once its
// delay has passed: a timer armed inside a tool's call, which has no
// goroutine until it fires (red team rtX #2, #3).
type Mailer struct {
	mu    sync.Mutex
	sent  []string
	confs map[string]chan struct{}
}

// NewMailer returns a Mailer with nothing scheduled.
func NewMailer() *Mailer {
	return &Mailer{confs: map[string]chan struct{}{}}
}

// Schedule arms the reminder to to, sent after in, and returns its id.
func (m *Mailer) Schedule(to string, in time.Duration) string {
	id, done := m.add()
	time.AfterFunc(in, func() {
		m.mu.Lock()
		m.sent = append(m.sent, to)
		m.mu.Unlock()
		close(done)
	})
	return id
}

// Record notes a reminder to to that nothing sends: its confirmation
// is closed only by CloseAll, which a test calls once its suite is done.
func (m *Mailer) Record(to string) string {
	id, done := m.add()
	never.mu.Lock()
	never.chans = append(never.chans, done)
	never.mu.Unlock()
	return id
}

// never holds the confirmations of the reminders Record noted.
var never struct {
	mu    sync.Mutex
	chans []chan struct{}
}

// CloseAll closes the confirmations of the reminders Record noted, so
// that an agent left waiting for one returns.
func CloseAll() {
	never.mu.Lock()
	defer never.mu.Unlock()
	for _, ch := range never.chans {
		close(ch)
	}
	never.chans = nil
}

// SendNow sends a mail to to at once.
func (m *Mailer) SendNow(to string) {
	m.mu.Lock()
	m.sent = append(m.sent, to)
	m.mu.Unlock()
}

func (m *Mailer) add() (string, chan struct{}) {
	m.mu.Lock()
	defer m.mu.Unlock()
	id := "rem-" + strconv.Itoa(len(m.confs)+1)
	done := make(chan struct{})
	m.confs[id] = done
	return id, done
}

// Confirmation is closed once reminder id's mail went out.
func (m *Mailer) Confirmation(id string) <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.confs[id]
}

// Sent returns the recipients of the mails sent so far.
func (m *Mailer) Sent() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string{}, m.sent...)
}

// Window is a send window that opens once a cool-down has passed: its
// timer is armed when it is built (in Setup), and the channel Ready
// returns is closed by it.
type Window struct{ open chan struct{} }

// NewWindow returns a Window that opens after coolDown.
func NewWindow(coolDown time.Duration) *Window {
	w := &Window{open: make(chan struct{})}
	time.AfterFunc(coolDown, func() { close(w.open) })
	return w
}

// Ready returns a channel closed once the window opens.
func (w *Window) Ready() <-chan struct{} {
	return w.open
}
