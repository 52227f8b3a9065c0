// Package identityvar holds identities made fresh before the call, in a
// variable (red team fF): the message says where the value is made, not
// "at the call site", and does not promise that a retry loop around the
// call gets a fresh one.
package identityvar

import "github.com/google/uuid"

//agentidem:write identity=to,subject
func sendEmail(to, subject, body string) error { return nil }

func keyBeforeRetryLoop(to string) error {
	subject := "receipt " + uuid.NewString()
	var err error
	for i := 0; i < 3; i++ {
		if err = sendEmail(to, subject, "b"); err == nil { // want `identity of sendEmail \(subject\) is built from uuid.NewString in this function before the call: every run of the function, as a redelivery, gets a fresh identity`
			return nil
		}
	}
	return err
}

func keyAtTheCall(to string) error {
	return sendEmail(to, "receipt "+uuid.NewString(), "b") // want `identity of sendEmail \(subject\) is built from uuid.NewString at the call site: every retry or redelivery gets a fresh identity`
}

func keyFromTheRequest(to, orderID string) error {
	subject := "receipt " + orderID
	return sendEmail(to, subject, "b")
}
