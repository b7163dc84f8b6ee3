package jobs

// UpcastSendEmailV3ToV4 is the hand-written upcast the generated code calls: version 4
// replaced the single recipient with a list, which no declarative change expresses.
func UpcastSendEmailV3ToV4(p SendEmailV3) (SendEmailV4, error) {
	return SendEmailV4{Recipients: []string{p.Recipient}, Subject: p.Subject, Cc: p.Cc}, nil
}
