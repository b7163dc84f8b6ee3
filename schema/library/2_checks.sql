-- The function library, part 2: the checks a generated jobc_enqueue_<kind> shares
-- with every other (1_messages.sql says what the library is). Each returns the Go
-- validator's rule for a problem (runtime/internal/schema), or NULL for none.
--
-- jsonb itself already refuses invalid UTF-8, NUL (\u0000) and lone surrogates before
-- a function runs, and holds no NaN or infinity; jobc_payload_too_deep and
-- jobc_exact_number check the rest of what Go's Enqueue checks so that a payload they
-- accept reaches a Go worker exactly as it was given (runtime/internal/schema/exact.go).

-- jobc_missing_properties: the required properties p_object lacks, in p_required's order.
CREATE OR REPLACE FUNCTION jobc_missing_properties(p_object jsonb, p_required text[]) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE count(*)
        WHEN 0 THEN NULL
        WHEN 1 THEN 'missing property ' || min(jobc_go_quote(r))
        ELSE 'missing properties ' || string_agg(jobc_go_quote(r), ', ' ORDER BY o) END
    FROM unnest(p_required) WITH ORDINALITY AS u(r, o)
    WHERE NOT p_object ? r
$$;

-- jobc_additional_properties: the members of p_object not in p_known (with
-- additionalProperties: false), sorted by name.
CREATE OR REPLACE FUNCTION jobc_additional_properties(p_object jsonb, p_known text[]) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT 'additional properties ' || string_agg(jobc_go_quote(k), ', ' ORDER BY k COLLATE "C") || ' not allowed'
    FROM jsonb_object_keys(p_object) AS k
    WHERE NOT k = ANY (p_known)
    HAVING count(*) > 0
$$;

-- jobc_unique_items: the first two equal items of p_array (uniqueItems). jsonb's
-- equality is JSON's: numbers by value, objects by members.
CREATE OR REPLACE FUNCTION jobc_unique_items(p_array jsonb) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT 'uniqueItems: items at ' || (a.i - 1) || ' and ' || (b.i - 1) || ' are equal'
    FROM jsonb_array_elements(p_array) WITH ORDINALITY a(x, i)
    JOIN jsonb_array_elements(p_array) WITH ORDINALITY b(y, i) ON b.i > a.i AND a.x = b.y
    ORDER BY a.i, b.i
    LIMIT 1
$$;

-- jobc_payload_too_deep returns the JSON pointer of the first container (byte order
-- of pointers, as Go compares them) nested deeper than 64 objects and arrays, or NULL.
-- A payload holds at most 64 containers one inside the other ([[1]] nests two): the
-- bound Go's Enqueue and worker enforce (schema.MaxDepth), which keeps every walk of a
-- payload short and a payload one producer accepts decodable everywhere. The path
-- query answers the common case in one pass; only a payload nested too deep is walked
-- for the pointer.
CREATE OR REPLACE FUNCTION jobc_payload_too_deep(p jsonb) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    WITH RECURSIVE t(v, ptr, level) AS (
        SELECT p, '', 0
        WHERE jsonb_path_exists(p, 'strict $.**{64} ? (@.type() == "object" || @.type() == "array")')
        UNION ALL
        SELECT c.value, t.ptr || '/' || c.key, t.level + 1
        FROM t, LATERAL (
            SELECT e.key, e.value FROM jsonb_each(CASE WHEN jsonb_typeof(t.v) = 'object' THEN t.v END) e
            UNION ALL
            SELECT (a.i - 1)::text, a.value
            FROM jsonb_array_elements(CASE WHEN jsonb_typeof(t.v) = 'array' THEN t.v END) WITH ORDINALITY a(value, i)
        ) c
        WHERE t.level < 64 AND jsonb_typeof(c.value) IN ('object', 'array')
    )
    SELECT min(ptr COLLATE "C") FROM t WHERE level = 64
$$;

-- jobc_exact_number returns the rule a number of the payload breaks in a place whose
-- Go type is p_type ('integer': int64, 'number': float64), or NULL. jsonb holds a
-- number as a numeric, which keeps the scale it was written with (1.0 stays 1.0) and
-- drops the exponent (1e2 is 100): Go's worker decodes that text. An integer must
-- have no digit after the decimal point (int64 does not decode 1.0) and fit int64; a
-- number that is not an integer is left to the type check, which names it. A float64
-- must neither overflow (at 2^1024 - 2^970 and beyond, Go's ParseFloat gives an
-- infinity) nor round to 0 (at 2^-1075 and below, it gives 0, as 1e-400 did).
CREATE OR REPLACE FUNCTION jobc_exact_number(p jsonb, p_type text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE
        WHEN jsonb_typeof(p) IS DISTINCT FROM 'number' THEN NULL
        WHEN p_type = 'integer' THEN CASE
            WHEN p::numeric <> trunc(p::numeric) THEN NULL
            WHEN scale(p::numeric) > 0 THEN 'integer written with a fractional part, which Go''s int64 does not decode'
            WHEN p::numeric NOT BETWEEN -9223372036854775808 AND 9223372036854775807 THEN 'integer out of int64 range'
            END
        WHEN p_type = 'number' THEN CASE
            WHEN abs(p::numeric) >= 179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497792
                THEN 'number out of float64 range'
            WHEN p::numeric <> 0 AND abs(p::numeric) * 404804506614621236704990693437834614099113299528284236713802716054860679135990693783920767402874248990374155728633623822779617474771586953734026799881477019843034848553132722728933815484186432682479535356945490137124014966849385397236206711298319112681620113024717539104666829230461005064372655017292012526615415482186989568 <= 1
                THEN 'number too small for float64, which would round it to 0'
            END
        END
$$;
