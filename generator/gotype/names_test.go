package gotype

import "testing"

func TestGoName(t *testing.T) {
	cases := map[string]string{
		"invoice_id":        "InvoiceID",
		"callbackUrl":       "CallbackURL",
		"send-welcome-mail": "SendWelcomeMail",
		"http_status":       "HTTPStatus",
		"userUUID":          "UserUUID",
		"s3_key":            "S3Key",
		"HTMLBody":          "HTMLBody",
		"api.version":       "APIVersion",
		"2fa_code":          "X2faCode",
		"email":             "Email",
		"ids":               "Ids",
		"pdf_url":           "PDFURL",
		"___":               "",
	}
	for in, want := range cases {
		if got := GoName(in); got != want {
			t.Errorf("GoName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLowerFirst(t *testing.T) {
	cases := map[string]string{"SendEmail": "sendEmail", "URLCheck": "urlCheck", "ID": "id", "X": "x", "already": "already"}
	for in, want := range cases {
		if got := LowerFirst(in); got != want {
			t.Errorf("LowerFirst(%q) = %q, want %q", in, got, want)
		}
	}
}
