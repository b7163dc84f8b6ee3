-- The function library, part 1: the error an invalid payload raises, and Go's quoting
-- that its messages use.
--
-- The library is the shared half of the jobc_enqueue_<kind> functions that `jobc
-- generate` writes for a spec with `producers: {sql: ...}`. A generated function fills
-- the payload's defaults and checks it against its write version's schema, both
-- written out per kind, calling the checks of the library that are the same for every
-- schema (missing and additional properties, unique items, depth, exact numbers,
-- formats) and raising with jobc_payload_invalid; it computes the unique key with
-- jobc_go_json, jobc_unique_period and jobc_bound_unique_key, and inserts through
-- jobc_enqueue_job (0001_baseline.sql), which writes the row Go's Enqueue writes.
--
-- Every function here is pure: it reads no table and runs with the caller's rights.
-- The library is applied after the numbered migrations, as one unit, whenever its
-- version is newer than the one the database records (schema.go); so each file holds
-- only CREATE OR REPLACE FUNCTION, and a change keeps every function's signature and
-- meaning for the generated functions of older releases.

-- jobc_payload_invalid raises the error of an invalid payload, with the message Go's
-- Enqueue returns: "jobc: enqueue <kind>: invalid <kind> payload (version <n>):
-- <pointer>: <rule>; ...", the problems sorted by pointer (byte order) as Go sorts
-- them. SQLSTATE 22J01 (class 22, data exception); DETAIL holds the problems as a
-- JSON array of {"field": pointer, "message": rule}. jobc_payload_invalid_in says it
-- of what p_action does: "jobc: <action>: invalid <kind> payload (version <n>): ...",
-- as Go's StartWorkflow ("start workflow <name>") says it of an input.
CREATE OR REPLACE FUNCTION jobc_payload_invalid_in(p_action text, p_kind text, p_version integer, p_fields text[], p_messages text[])
RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    v_text   text;
    v_detail jsonb;
BEGIN
    SELECT string_agg(CASE WHEN f = '' THEN m ELSE f || ': ' || m END, '; ' ORDER BY f COLLATE "C", i),
           jsonb_agg(jsonb_build_object('field', f, 'message', m) ORDER BY f COLLATE "C", i)
    INTO v_text, v_detail
    FROM unnest(p_fields, p_messages) WITH ORDINALITY AS p(f, m, i);
    RAISE EXCEPTION 'jobc: %: invalid % payload (version %): %', p_action, p_kind, p_version, v_text
        USING ERRCODE = '22J01', DETAIL = v_detail::text;
END
$$;

CREATE OR REPLACE FUNCTION jobc_payload_invalid(p_kind text, p_version integer, p_fields text[], p_messages text[])
RETURNS void
LANGUAGE sql AS $$
    SELECT jobc_payload_invalid_in('enqueue ' || p_kind, p_kind, p_version, p_fields, p_messages)
$$;

-- jobc_go_quote quotes a string as Go does in the validator's messages: 'it''s' is
-- written 'it\'s', control characters as \n, \t, \x01, \u0085. p_style 'rune' quotes
-- as %q does a rune ('\\' for a backslash), 'string' as strconv.Quote ("it's"). (Go
-- escapes every rune that is not printable; this escapes the C0 and C1 controls and
-- U+2028/U+2029 only, so a message may differ for exotic characters — the decision
-- never does.) Backslashes are written in E'' literals, which do not depend on
-- standard_conforming_strings.
CREATE OR REPLACE FUNCTION jobc_go_quote(p text, p_style text DEFAULT 'message') RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
    q   text := CASE WHEN p_style = 'string' THEN '"' ELSE '''' END;
    out text := '';
    c   text;
    cp  integer;
BEGIN
    IF p !~ E'[\\x01-\\x1f\\x7f-\\x9f\\\\''"\\u2028\\u2029]' THEN
        RETURN q || p || q;
    END IF;
    FOREACH c IN ARRAY regexp_split_to_array(p, '') LOOP
        cp := ascii(c);
        out := out || CASE
            WHEN cp = 92 THEN E'\\\\'
            WHEN c = q THEN E'\\' || q
            WHEN cp = 7 THEN E'\\a' WHEN cp = 8 THEN E'\\b' WHEN cp = 12 THEN E'\\f'
            WHEN cp = 10 THEN E'\\n' WHEN cp = 13 THEN E'\\r' WHEN cp = 9 THEN E'\\t' WHEN cp = 11 THEN E'\\v'
            WHEN cp < 32 OR cp = 127 THEN E'\\x' || lpad(to_hex(cp), 2, '0')
            WHEN cp BETWEEN 128 AND 159 OR cp IN (8232, 8233) THEN E'\\u' || lpad(to_hex(cp), 4, '0')
            ELSE c END;
    END LOOP;
    IF p_style = 'message' AND right(p, 1) = E'\\' THEN
        -- Go's messages unescape \" after strconv.Quote, which takes the escaped
        -- final backslash and the closing quote for one: 'a\' for a\, not 'a\\'.
        out := left(out, -1);
    END IF;
    RETURN q || out || q;
END
$$;
