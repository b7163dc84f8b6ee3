-- The function library, part 3: unique keys computed in SQL exactly as Go's Enqueue
-- computes them (runtime/unique.go), so that Go and SQL find each other's jobs
-- (1_messages.sql says what the library is).

-- jobc_go_json encodes a scalar of a payload as Go's encoding/json writes it into a
-- unique key, so that a key computed here equals the one Go's Enqueue computes for
-- the same payload (runtime/unique.go). p_float says the field is a JSON Schema
-- number (a Go float64); other numbers are integers (int64). Strings escape <, > and
-- & as Go's do; float64s use Go's shortest form (1e+21, 1e-7, 0.000001).
CREATE OR REPLACE FUNCTION jobc_go_json(p jsonb, p_float boolean) RETURNS text
LANGUAGE plpgsql IMMUTABLE
SET extra_float_digits = 1 -- float8 text is then the shortest that reads back the same
AS $$
DECLARE
    f      float8;
    s      text;
    digits text;
    exp10  integer; -- the value is 0.<digits> * 10^exp10
    m      text[];
BEGIN
    IF p IS NULL THEN
        RETURN 'null';
    END IF;
    CASE jsonb_typeof(p)
    WHEN 'string' THEN
        RETURN replace(replace(replace(replace(replace(p::text,
            '<', E'\\u003c'), '>', E'\\u003e'), '&', E'\\u0026'), U&'\2028', E'\\u2028'), U&'\2029', E'\\u2029');
    WHEN 'number' THEN
        IF NOT p_float THEN
            RETURN trunc(p::numeric)::text;
        END IF;
        f := p::numeric::float8;
        IF f = 0 THEN
            RETURN '0'; -- numeric has no negative zero: where Go writes -0, this writes 0
        END IF;
        -- float8 text is -?d[.ddd][e±dd]: take its digits and decimal exponent.
        m := regexp_match(abs(f)::text, E'^(\\d+)(?:\\.(\\d+))?(?:e([-+]\\d+))?$');
        digits := m[1] || coalesce(m[2], '');
        exp10 := length(m[1]) + coalesce(m[3]::integer, 0) - (length(digits) - length(ltrim(digits, '0')));
        digits := rtrim(ltrim(digits, '0'), '0');
        s := CASE WHEN f < 0 THEN '-' ELSE '' END;
        IF abs(f) < 1e-6 OR abs(f) >= 1e21 THEN
            -- strconv's 'e' format, with encoding/json's cleanup of e-07 to e-7.
            s := s || left(digits, 1) || CASE WHEN length(digits) > 1 THEN '.' || substr(digits, 2) ELSE '' END
                 || 'e' || CASE WHEN exp10 - 1 < 0 THEN '-' || (1 - exp10)::text
                                ELSE '+' || CASE WHEN exp10 < 11 THEN '0' ELSE '' END || (exp10 - 1)::text END;
        ELSIF exp10 <= 0 THEN
            s := s || '0.' || repeat('0', -exp10) || digits;
        ELSIF exp10 >= length(digits) THEN
            s := s || digits || repeat('0', exp10 - length(digits));
        ELSE
            s := s || left(digits, exp10) || '.' || substr(digits, exp10 + 1);
        END IF;
        RETURN s;
    ELSE
        RETURN p::text; -- true, false, null
    END CASE;
END
$$;

-- jobc_unique_period is the suffix a unique period adds to a key: "@" and the start
-- of the period p_at falls in, in UTC, as RFC 3339 without fraction (Go's
-- Format(time.RFC3339) of at.UTC().Truncate(period)). Go's Truncate counts periods
-- from 0001-01-01 00:00 UTC, 62135596800 s before the Unix epoch; for a period that
-- divides a day that is the same as counting from the epoch, for a week it is not.
CREATE OR REPLACE FUNCTION jobc_unique_period(p_at timestamptz, p_period_us bigint) RETURNS text
LANGUAGE sql IMMUTABLE STRICT AS $$
    SELECT '@' || to_char(
        to_timestamp(floor((us - mod(us, p_period_us)) / 1000000) - 62135596800) AT TIME ZONE 'UTC',
        'YYYY-MM-DD"T"HH24:MI:SS"Z"')
    FROM (SELECT extract(epoch FROM p_at) * 1000000 + 62135596800000000 AS us) t
$$;

-- jobc_bound_unique_key returns the unique key stored for p_key: p_key itself, or,
-- when it is longer than 1024 bytes or starts with 'sha256:', 'sha256:' and the hex
-- SHA-256 of its UTF-8 bytes, as Go's Enqueue stores it (runtime/unique.go). A btree
-- refuses index entries over about 2.7 kB, with an error that names no field; hashed,
-- a key of any length works. Hashing every key with the prefix keeps a stored key
-- unambiguous: it is a hash if and only if it has the prefix.
CREATE OR REPLACE FUNCTION jobc_bound_unique_key(p_key text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE
        WHEN p_key IS NULL THEN NULL
        WHEN octet_length(p_key) <= 1024 AND left(p_key, 7) <> 'sha256:' THEN p_key
        ELSE 'sha256:' || encode(sha256(convert_to(p_key, 'UTF8')), 'hex')
        END
$$;
