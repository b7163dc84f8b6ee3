package names

import "strings"

// Article returns the indefinite article a generated sentence puts before word, a
// job kind or an event name: "an" before a vowel sound (an invoice, an hourly_report)
// and "a" otherwise (a send_email, a user_signup, a one_off). English decides by
// sound, not spelling, so the letters that are read otherwise start the exceptions.
func Article(word string) string {
	w := strings.ToLower(word)
	for _, p := range consonantSounds {
		if strings.HasPrefix(w, p) {
			return "a"
		}
	}
	for _, p := range silentH {
		if strings.HasPrefix(w, p) {
			return "an"
		}
	}
	if w != "" && strings.ContainsRune("aeiou", rune(w[0])) {
		return "an"
	}
	// Digits read as words: 8 and 11 and 18 are "eight", "eleven", "eighteen".
	if strings.HasPrefix(w, "8") || (strings.HasPrefix(w, "11") || strings.HasPrefix(w, "18")) && !startsWithDigits(w, 3) {
		return "an"
	}
	return "a"
}

// startsWithDigits reports whether w starts with at least n digits.
func startsWithDigits(w string, n int) bool {
	if len(w) < n {
		return false
	}
	for i := range n {
		if w[i] < '0' || w[i] > '9' {
			return false
		}
	}
	return true
}

var (
	// consonantSounds start with a vowel letter read as a consonant: the "y" of
	// user, unique, euro and the "w" of one.
	consonantSounds = []string{"uni", "use", "usa", "usi", "usu", "ute", "uti", "ura", "uro", "eu", "ewe", "one", "once"}
	// silentH start with an "h" not read.
	silentH = []string{"hour", "honest", "honor", "honour", "heir"}
)
