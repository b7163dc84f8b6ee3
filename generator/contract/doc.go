// Package contract checks the payload contracts of a jobc project across versions and
// releases, so that old and new workers can run side by side during a rolling deploy.
//
// Check looks at one spec on its own: every payload version after the first must be
// reachable from its predecessor, either through declarative changes that really turn
// every payload of the previous version into a valid payload of this one, or through a
// hand-written Upcast<Name>V<n-1>ToV<n> in the output package when the versions are
// not compatible.
//
// Verify adds what needs history: a baseline (jobc.lock, or the spec at a git
// revision) records every released version. A released version must never change,
// write_version must not move past what released workers decode, and a released kind
// must not disappear while queued jobs of it may remain.
//
// Exercise runs what Check can only reason about: sample documents of every older
// version (package samples) go through the upcast chain in a throwaway build of the
// user's generated package, and each result must be a valid newest-version payload.
//
// Every Finding is reported as `file:line:col: path: message [RULE]`, with "note: "
// before the message of findings that do not fail the check. The rules:
//
//	RELEASED_VERSION_CHANGED  error  a locked version's canonical schema changed (with a diff)
//	UPCAST_MISSING            error  an incompatible version has no changes and no hand-written upcast
//	UPCAST_SIGNATURE          error  the hand-written upcast has the wrong signature
//	UPCAST_HAND_WRITTEN       note   an incompatible version is upcast by a hand-written function
//	CHANGES_INCORRECT         error  the declared changes leave some old payloads invalid
//	CHANGE_DEFAULT_INVALID    error  the default of an `add` or `require` change does not validate
//	CHANGE_NOT_APPLICABLE     error  a change names a field the versions do not have
//	WRITE_VERSION_AHEAD       error  write_version is newer than any released worker decodes
//	VERSION_RETIRED           note   a locked version was removed
//	KIND_REMOVED              error  a locked kind or alias is gone without being kept as an alias
//	UPCAST_OUTPUT_INVALID     error  Exercise: a sample upcast to the newest version is rejected
//	UPCAST_FAILED             error  Exercise: a sample's upcast returned an error
//
// Notes that explain an incompatibility carry the rule of the compatibility checker
// (package compat), such as MAX_LENGTH_DECREASED, at the place in the new schema where
// the difference is.
package contract
