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
		"ids":               "IDs",
		"user_ids":          "UserIDs",
		"userIDs":           "UserIDs",
		"callbackURLs":      "CallbackURLs",
		"URLsToCheck":       "URLsToCheck",
		"skus":              "SKUs",
		"pdf_url":           "PDFURL",
		"ipv4_address":      "IPv4Address",
		"oauth_token":       "OAuthToken",
		"db_name":           "DBName",
		"status":            "Status",
		"tls":               "TLS",
		"https_only":        "HTTPSOnly",
		"ALL_CAPS":          "AllCaps",
		"éclair":            "Éclair",
		"___":               "",
		"":                  "",
	}
	for in, want := range cases {
		if got := GoName(in); got != want {
			t.Errorf("GoName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLowerFirst(t *testing.T) {
	cases := map[string]string{
		"SendEmail": "sendEmail", "URLCheck": "urlCheck", "ID": "id", "X": "x", "already": "already",
		"IDsByUser": "idsByUser", "HTTPServer": "httpServer", "": "",
	}
	for in, want := range cases {
		if got := LowerFirst(in); got != want {
			t.Errorf("LowerFirst(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSingular(t *testing.T) {
	cases := map[string]string{
		"OrderLineItems": "OrderLineItem", "OrderCategories": "OrderCategory",
		"OrderAddresses": "OrderAddress", "OrderStatuses": "OrderStatus", "OrderBoxes": "OrderBox",
		"OrderMatches": "OrderMatch", "OrderStatus": "OrderStatusItem", "OrderData": "OrderDataItem",
		"OrderAnalysis": "OrderAnalysisItem", "OrderAddress": "OrderAddressItem", "OrderIDs": "OrderID",
		"OrderRows": "OrderRow", "OrderRowItem": "OrderRowItemItem",
	}
	for in, want := range cases {
		if got := singular(in); got != want {
			t.Errorf("singular(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestEnumSuffix(t *testing.T) {
	cases := []struct {
		in   any
		want string
	}{
		{"in_progress", "InProgress"}, {"1080p", "1080p"}, {int64(3), "3"}, {int64(-1), "Minus1"},
		{"", "Empty"}, {"--", "Value2"}, {"http_error", "HTTPError"},
		{int64(-9223372036854775808), "Minus9223372036854775808"},
	}
	for _, c := range cases {
		if got := enumSuffix(c.in); got != c.want {
			t.Errorf("enumSuffix(%#v) = %q, want %q", c.in, got, c.want)
		}
	}
}
