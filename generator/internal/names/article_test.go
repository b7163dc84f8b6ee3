package names_test

import (
	"testing"

	"github.com/jobc-dev/jobc/generator/internal/names"
)

func TestArticle(t *testing.T) {
	for word, want := range map[string]string{
		"invoice":       "an",
		"Invoice":       "an",
		"email":         "an",
		"export.orders": "an",
		"order_placed":  "an",
		"audit":         "an",
		"upload":        "an",
		"hourly_report": "an",
		"send_email":    "a",
		"billing.sync":  "a",
		"user_signup":   "a",
		"unique_digest": "a",
		"usage_report":  "a",
		"euro_rates":    "a",
		"one_off":       "a",
		"8ball":         "an",
		"11th_hour":     "an",
		"110_retry":     "a",
		"1password":     "a",
		"":              "a",
	} {
		if got := names.Article(word); got != want {
			t.Errorf("Article(%q) = %q, want %q", word, got, want)
		}
	}
}
