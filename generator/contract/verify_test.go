package contract_test

import (
	"testing"

	"github.com/jobc-dev/jobc/generator/contract"
)

// released is the spec recorded in jobc.lock before each case.
const released = `  send_email:
    aliases: [send_mail]
    payload:
      versions:
        1:
          schema:
            type: object
            additionalProperties: false
            required: [email]
            properties:
              email: {type: string, maxLength: 200}
  send_fax:
    payload:
      versions:
        1:
          schema: {type: object, properties: {number: {type: string}}}
`

const sendFax = `  send_fax:
    payload:
      versions:
        1:
          schema: {type: object, properties: {number: {type: string}}}
`

func TestVerify(t *testing.T) {
	cases := []struct {
		name   string
		before string // "" for released
		after  string
		want   []string
	}{
		{
			name:  "nothing changed",
			after: released,
		},
		{
			name: "a released version was edited",
			after: `  send_email:
    aliases: [send_mail]
    payload:
      versions:
        1:
          schema:
            type: object
            additionalProperties: false
            required: [email]
            properties:
              email: {type: string, maxLength: 100}
` + sendFax,
			want: []string{
				`jobc.yaml:15:37: jobs.send_email.payload.versions.1.schema.properties.email.maxLength: released version 1 of send_email changed since jobc.lock: stored jobs and running workers depend on it, so restore it and make the change in a new version (jobc check shows the diff) [RELEASED_VERSION_CHANGED]`,
				`--- send_email version 1 (jobc.lock)`,
				`+++ send_email version 1 (jobc.yaml)`,
				`@@ -2,7 +2,7 @@`,
				`   "additionalProperties": false,`,
				`   "properties": {`,
				`     "email": {`,
				`-      "maxLength": 200,`,
				`+      "maxLength": 100,`,
				`       "type": "string"`,
				`     }`,
				`   },`,
			},
		},
		{
			name: "write_version jumps ahead of what released workers decode",
			after: `  send_email:
    aliases: [send_mail]
    payload:
      versions:
        1:
          schema:
            type: object
            additionalProperties: false
            required: [email]
            properties:
              email: {type: string, maxLength: 200}
        2:
          schema:
            type: object
            additionalProperties: false
            required: [email]
            properties:
              email: {type: string, maxLength: 200}
              name: {type: string}
` + sendFax,
			want: []string{
				`jobc.yaml:8:7: jobs.send_email.payload.write_version: enqueue writes version 2 (write_version defaults to the newest version), but workers of the release in jobc.lock decode send_email versions up to 1: version 2 jobs enqueued during the rollout, or after a rollback, wait until a worker of this release claims them; roll out in two releases: first deploy version 2 with write_version: 1, then set write_version: 2 once no older worker runs [WRITE_VERSION_AHEAD]`,
			},
		},
		{
			name: "first release of a new version keeps write_version",
			after: `  send_email:
    aliases: [send_mail]
    payload:
      write_version: 1
      versions:
        1:
          schema:
            type: object
            additionalProperties: false
            required: [email]
            properties:
              email: {type: string, maxLength: 200}
        2:
          schema:
            type: object
            additionalProperties: false
            required: [email]
            properties:
              email: {type: string, maxLength: 200}
              name: {type: string}
` + sendFax,
		},
		{
			name: "second release moves write_version to a released version",
			before: `  send_email:
    aliases: [send_mail]
    payload:
      write_version: 1
      versions:
        1:
          schema: {type: object, additionalProperties: false, properties: {email: {type: string}}}
        2:
          schema: {type: object, additionalProperties: false, properties: {email: {type: string}, name: {type: string}}}
` + sendFax,
			after: `  send_email:
    aliases: [send_mail]
    payload:
      versions:
        1:
          schema: {type: object, additionalProperties: false, properties: {email: {type: string}}}
        2:
          schema: {type: object, additionalProperties: false, properties: {email: {type: string}, name: {type: string}}}
` + sendFax,
		},
		{
			name: "a released version is retired",
			before: `  send_email:
    aliases: [send_mail]
    payload:
      versions:
        1:
          schema: {type: object, additionalProperties: false, properties: {email: {type: string}}}
        2:
          schema: {type: object, additionalProperties: false, properties: {email: {type: string}, name: {type: string}}}
` + sendFax,
			after: `  send_email:
    aliases: [send_mail]
    payload:
      versions:
        2:
          schema: {type: object, additionalProperties: false, properties: {email: {type: string}, name: {type: string}}}
` + sendFax,
			want: []string{
				"jobc.yaml:8:7: jobs.send_email.payload.versions: note: version 1 of send_email is in jobc.lock but no longer declared: workers stop decoding it, so unfinished version 1 jobs would never run; check with `jobc status` that none remain before deploying [VERSION_RETIRED]",
			},
		},
		{
			name: "a released kind is removed",
			after: `  send_email:
    aliases: [send_mail]
    payload:
      versions:
        1:
          schema:
            type: object
            additionalProperties: false
            required: [email]
            properties:
              email: {type: string, maxLength: 200}
`,
			want: []string{
				"jobc.lock:29:5: jobs.send_fax: kind send_fax is in jobc.lock but no longer in the spec: its queued jobs would never run; keep it until `jobc status` shows no unfinished send_fax jobs, or list it under aliases of the kind that replaces it [KIND_REMOVED]",
			},
		},
		{
			name: "a released kind is kept as an alias",
			after: `  send_email:
    aliases: [send_mail]
    payload:
      versions:
        1:
          schema:
            type: object
            additionalProperties: false
            required: [email]
            properties:
              email: {type: string, maxLength: 200}
  send_message:
    aliases: [send_fax]
    payload:
      versions:
        1:
          schema: {type: object, properties: {number: {type: string}}}
`,
		},
		{
			name: "a released kind kept as an alias of a kind whose version differs",
			after: `  send_email:
    aliases: [send_mail, send_fax]
    payload:
      versions:
        1:
          schema:
            type: object
            additionalProperties: false
            required: [email]
            properties:
              email: {type: string, maxLength: 200}
`,
			want: []string{
				`jobc.yaml:12:13: jobs.send_email.payload.versions.1.schema.additionalProperties: released version 1 of send_fax changed since jobc.lock: send_fax is now an alias of send_email, whose version 1 must stay identical because queued send_fax jobs are decoded with it (jobc check shows the diff) [RELEASED_VERSION_CHANGED]`,
				`--- send_fax version 1 (jobc.lock)`,
				`+++ send_email version 1 (jobc.yaml)`,
				`@@ -1,8 +1,13 @@`,
				` {`,
				`+  "additionalProperties": false,`,
				`   "properties": {`,
				`-    "number": {`,
				`+    "email": {`,
				`+      "maxLength": 200,`,
				`       "type": "string"`,
				`     }`,
				`   },`,
				`+  "required": [`,
				`+    "email"`,
				`+  ],`,
				`   "type": "object"`,
				` }`,
			},
		},
		{
			name: "a released alias is dropped",
			after: `  send_email:
    payload:
      versions:
        1:
          schema:
            type: object
            additionalProperties: false
            required: [email]
            properties:
              email: {type: string, maxLength: 200}
` + sendFax,
			want: []string{
				"jobc.lock:4:5: jobs.send_email.aliases: alias send_mail of send_email is in jobc.lock but no longer in the spec: queued send_mail jobs would never run; keep the alias until `jobc status` shows no unfinished send_mail jobs [KIND_REMOVED]",
			},
		},
		{
			// The message used to say that write_version defaults to the newest
			// version, at the payload, when it was set to 3 on purpose.
			name:   "an explicit write_version jumps ahead",
			before: released + "        2: {from: 1, schema: {type: object, properties: {number: {type: string}}}}\n",
			after: `  send_email:
    aliases: [send_mail]
    payload:
      versions:
        1:
          schema:
            type: object
            additionalProperties: false
            required: [email]
            properties:
              email: {type: string, maxLength: 200}
  send_fax:
    payload:
      write_version: 3
      versions:
        1:
          schema: {type: object, properties: {number: {type: string}}}
        2: {from: 1, schema: {type: object, properties: {number: {type: string}}}}
        3: {from: 2, schema: {type: object, description: fax, properties: {number: {type: string}}}}
`,
			want: []string{
				`jobc.yaml:18:22: jobs.send_fax.payload.write_version: enqueue writes version 3 (set by write_version), but workers of the release in jobc.lock decode send_fax versions up to 2: version 3 jobs enqueued during the rollout, or after a rollback, wait until a worker of this release claims them; roll out in two releases: first deploy version 3 with write_version: 2, then set write_version: 3 once no older worker runs [WRITE_VERSION_AHEAD]`,
			},
		},
		{
			// The advice used to be "write_version: 1", a version no longer declared.
			name: "write_version jumps ahead after the released versions were removed",
			after: `  send_email:
    aliases: [send_mail]
    payload:
      versions:
        1:
          schema:
            type: object
            additionalProperties: false
            required: [email]
            properties:
              email: {type: string, maxLength: 200}
  send_fax:
    payload:
      versions:
        2: {schema: {type: object, properties: {number: {type: string}}}}
`,
			want: []string{
				`jobc.yaml:18:7: jobs.send_fax.payload.versions: note: version 1 of send_fax is in jobc.lock but no longer declared: workers stop decoding it, so unfinished version 1 jobs would never run; check with ` + "`jobc status`" + ` that none remain before deploying [VERSION_RETIRED]`,
				`jobc.yaml:18:7: jobs.send_fax.payload.write_version: enqueue writes version 2 (write_version defaults to the newest version), but workers of the release in jobc.lock decode send_fax versions up to 1: version 2 jobs enqueued during the rollout, or after a rollback, wait until a worker of this release claims them; this release declares none of the versions they decode, so no write_version is safe: declare version 1 again (restored from jobc.lock) and write it until no older worker runs, then retire it [WRITE_VERSION_AHEAD]`,
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			before := c.before
			if before == "" {
				before = released
			}
			lock, err := contract.Lock(loadIn(t, dir, before, nil))
			if err != nil {
				t.Fatal(err)
			}
			if err := contract.WriteLock(dir, lock); err != nil {
				t.Fatal(err)
			}
			if lock, err = contract.LoadLock(dir); err != nil {
				t.Fatal(err)
			}
			fs, err := contract.Verify(loadIn(t, dir, c.after, nil), lock)
			if err != nil {
				t.Fatal(err)
			}
			compareLines(t, lines(t, fs), c.want)
		})
	}
}
