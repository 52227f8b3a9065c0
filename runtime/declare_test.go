package runtime

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestDeclareNamesOpsOfOneNameAfterTheirPackages: ops of one name declared
// by different packages are renamed after the last element of their
// import path, or the whole path where those are alike, and the names in
// After follow the ops they name. The names are this test's own, so the
// ops of the test binary's packages are left as they are.
func TestDeclareNamesOpsOfOneNameAfterTheirPackages(t *testing.T) {
	const refund = "Client.RefundDeclareTest"
	alone := Declare(&Op{Name: "auditDeclareTest", Kind: KindWrite, Pkg: "example.com/ledger"})
	// Declared before the op it names (a package's variables initialize
	// in their order), and of the same package: a plain name.
	summary := Declare(&Op{Name: "summaryDeclareTest", Kind: KindWrite, Pkg: "example.com/stripe", After: []string{refund}})
	s := Declare(&Op{Name: refund, Kind: KindWrite, Pkg: "example.com/stripe"})
	assert.Equal(t, refund, s.Name, "one package's op keeps its name")
	assert.Equal(t, []string{refund}, summary.After)

	// Another package's op names its package: "importpath Name".
	notify := Declare(&Op{Name: "notifyDeclareTest", Kind: KindWrite, Pkg: "example.com/mail", After: []string{"example.com/paypal/v2 " + refund, "example.com/stripe " + refund}})
	assert.Equal(t, []string{refund, refund}, notify.After, "an op not declared yet is named as written")

	p := Declare(&Op{Name: refund, Kind: KindWrite, Pkg: "example.com/paypal/v2"})
	assert.Equal(t, "stripe."+refund, s.Name)
	assert.Equal(t, "paypal."+refund, p.Name, "the major version is left out")
	assert.Equal(t, []string{"stripe." + refund}, summary.After)
	assert.Equal(t, []string{"paypal." + refund, "stripe." + refund}, notify.After)

	// A third package whose last element is stripe's too: those two are
	// named by their whole path.
	other := Declare(&Op{Name: refund, Kind: KindWrite, Pkg: "example.com/legacy/stripe"})
	assert.Equal(t, "example.com/stripe."+refund, s.Name)
	assert.Equal(t, "example.com/legacy/stripe."+refund, other.Name)
	assert.Equal(t, "paypal."+refund, p.Name)
	assert.Equal(t, []string{"paypal." + refund, "example.com/stripe." + refund}, notify.After)

	assert.Same(t, s, Declare(s), "declaring an op again changes nothing")
	assert.Equal(t, "example.com/stripe."+refund, s.Name)
	assert.Equal(t, "auditDeclareTest", alone.Name)

	// An op without a package (written by hand) is not renamed, nor
	// counted as a package of its own.
	hand := Declare(&Op{Name: "lookupDeclareTest", Kind: KindRead})
	one := Declare(&Op{Name: "lookupDeclareTest", Kind: KindRead, Pkg: "example.com/crm"})
	assert.Equal(t, "lookupDeclareTest", hand.Name)
	assert.Equal(t, "lookupDeclareTest", one.Name)
}
