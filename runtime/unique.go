package runtime

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// unfinishedStates are held together by a unique key: from insert until the job finishes.
var unfinishedStates = [...]State{StateAvailable, StateScheduled, StateRunning}

func (u *Unique) check(kind string) error {
	if len(u.Fields) == 0 {
		return fmt.Errorf("jobc: job type %s: unique needs at least one payload field", kind)
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

// uniqueKey returns the job's unique key ("" for none) and the finished states in
// which the key stays held. The key is the JSON array of the unique fields' values,
// followed by "@" and the start of the period the job's run time falls in.
func (jt *JobType) uniqueKey(raw []byte, o enqueueOptions) (string, []string, error) {
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
		return *o.dedupKey, finished, nil
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil {
		return "", nil, fmt.Errorf("unique key: %w", err)
	}
	values := make([]json.RawMessage, len(jt.Unique.Fields))
	for i, f := range jt.Unique.Fields {
		v, ok := doc[f]
		if !ok {
			v = json.RawMessage("null")
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, v); err != nil {
			return "", nil, fmt.Errorf("unique key field %s: %w", f, err)
		}
		values[i] = compact.Bytes()
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
	return string(key), finished, nil
}
