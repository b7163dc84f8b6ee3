package runtime

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jobc-dev/jobc/runtime/internal/schema"
)

// unfinishedStates are held together by a unique key: from insert until the job finishes.
var unfinishedStates = [...]State{StateAvailable, StateScheduled, StateRunning}

func (u *Unique) check(kind string) error {
	if len(u.Fields) == 0 {
		return fmt.Errorf("jobc: job type %s: unique needs at least one payload field", kind)
	}
	switch u.OnConflict {
	case "", OnConflictSkip:
	case OnConflictReplace:
		return u.checkReplace(kind)
	default:
		return fmt.Errorf("jobc: job type %s: unique on_conflict %q: want skip or replace", kind, u.OnConflict)
	}
	if len(u.While) == 0 {
		return nil
	}
	held := map[State]bool{}
	for _, s := range u.While {
		held[s] = true
	}
	for _, s := range unfinishedStates {
		if !held[s] {
			return fmt.Errorf("jobc: job type %s: unique while %v must include available, scheduled and running: a key is held from insert until the job finishes", kind, u.While)
		}
	}
	return nil
}

// checkReplace checks While for OnConflictReplace: exactly the waiting states, since
// only a waiting job's payload may be replaced and a key is held from the insert on.
func (u *Unique) checkReplace(kind string) error {
	if len(u.While) == 0 {
		return nil
	}
	held := map[State]bool{}
	for _, s := range u.While {
		held[s] = true
	}
	if len(held) != 2 || !held[StateAvailable] || !held[StateScheduled] {
		return fmt.Errorf("jobc: job type %s: unique while %v with on_conflict replace must be available and scheduled: only a waiting job's payload can be replaced", kind, u.While)
	}
	return nil
}

// onConflict is the on_conflict argument of jobc_enqueue_unique.
func (jt *JobType) onConflict() string {
	if jt.Unique != nil && jt.Unique.OnConflict == OnConflictReplace {
		return string(OnConflictReplace)
	}
	return string(OnConflictSkip)
}

// uniqueKey returns the job's unique key ("" for none) and the finished states in
// which the key stays held. The key is the JSON array of the unique fields' values,
// followed by "@" and the start of the period the job's run time falls in. The values
// come from doc, the payload decoded (nil: decode raw), as raw's bytes would give them.
func (jt *JobType) uniqueKey(raw []byte, doc any, o enqueueOptions) (string, []string, error) {
	if jt.Unique == nil && o.dedupKey == nil {
		return "", nil, nil // the common case, on the enqueue hot path
	}
	finished := []string{}
	if jt.Unique != nil {
		for _, s := range jt.Unique.While {
			if s.Finished() {
				finished = append(finished, string(s))
			}
		}
	}
	if o.dedupKey != nil {
		if o.finished != nil {
			finished = o.finished
		}
		return boundKey(*o.dedupKey), finished, nil
	}
	values, err := jt.uniqueValues(o.version, raw, doc)
	if err != nil {
		return "", nil, err
	}
	key, err := json.Marshal(values)
	if err != nil {
		return "", nil, fmt.Errorf("unique key: %w", err)
	}
	if p := jt.Unique.Period; p > 0 {
		at := time.Now()
		if o.runAt != nil {
			at = *o.runAt
		}
		key = fmt.Appendf(key, "@%s", at.UTC().Truncate(p).Format(time.RFC3339))
	}
	return boundKey(string(key)), finished, nil
}

// maxUniqueKey is the longest unique key stored as it is; a longer one is stored as
// hashedKeyPrefix and the hex SHA-256 of its bytes. PostgreSQL's btree refuses index
// entries over about 2.7 kB, so an unbounded key would fail the enqueue with an error
// that names no field; hashed, a key of any length works and no job is refused. A key
// that itself starts with hashedKeyPrefix is hashed too, whatever its length, so a
// stored key stands for one key only: either it has the prefix and is a hash, or it
// is the key. The SQL producers bound their keys alike (jobc_bound_unique_key,
// schema/library), so Go and SQL still find each other's jobs.
const (
	maxUniqueKey    = 1024
	hashedKeyPrefix = "sha256:"
)

// boundKey is the key stored for key (see maxUniqueKey).
func boundKey(key string) string {
	if len(key) <= maxUniqueKey && !strings.HasPrefix(key, hashedKeyPrefix) {
		return key
	}
	sum := sha256.Sum256([]byte(key))
	return hashedKeyPrefix + hex.EncodeToString(sum[:])
}

// uniqueValues returns the unique fields' values, in a payload of the version, as
// compact JSON (null when absent). Strings are encoded from the decoded document,
// which gives raw's bytes: encoding/json writes them with the same escapes. Numbers
// are written as the field's Go type writes them (schema.KeyNumber), so a payload
// given as JSON keys as the typed one does. An object or array is taken from raw
// itself, so its members keep raw's order.
func (jt *JobType) uniqueValues(version int, raw []byte, doc any) ([]json.RawMessage, error) {
	values, err := payloadValues(jt.schemas[version], raw, doc, jt.Unique.Fields)
	if err != nil {
		return nil, fmt.Errorf("unique key: %w", err)
	}
	return values, nil
}

// payloadValues returns the values of the top-level fields of a payload as compact
// JSON (null when absent), for unique and flow keys; see uniqueValues.
func payloadValues(s *schema.Schema, raw []byte, doc any, names []string) ([]json.RawMessage, error) {
	if doc == nil {
		var err error
		if doc, err = schema.Decode(raw); err != nil {
			return nil, err
		}
	}
	obj, _ := doc.(map[string]any)
	values := make([]json.RawMessage, len(names))
	var fields map[string]json.RawMessage // raw's members, decoded on demand
	for i, f := range names {
		v, ok := obj[f]
		switch v := v.(type) {
		case map[string]any, []any:
		case json.Number:
			values[i] = s.KeyNumber(f, v)
			continue
		default:
			if !ok {
				v = nil
			}
			b, err := json.Marshal(v)
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", f, err)
			}
			values[i] = b
			continue
		}
		if fields == nil {
			if err := json.Unmarshal(raw, &fields); err != nil {
				return nil, err
			}
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, fields[f]); err != nil {
			return nil, fmt.Errorf("field %s: %w", f, err)
		}
		values[i] = compact.Bytes()
	}
	return values, nil
}
