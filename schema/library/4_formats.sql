-- The function library, part 4: the formats, each a port of the runtime's check
-- (runtime/internal/schema/format.go) with its reasons, returning Go's reason or NULL
-- (1_messages.sql says what the library is). The parsers are ported byte for byte
-- from Go's net/url, net/netip and time, with Go's messages.
-- Each takes any JSON value and checks strings only.

CREATE OR REPLACE FUNCTION jobc_format_uuid(p jsonb) RETURNS text
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    s      text;
    groups text[];
    want   integer[] := ARRAY[8, 4, 4, 4, 12];
    bad    text;
BEGIN
    IF jsonb_typeof(p) IS DISTINCT FROM 'string' THEN
        RETURN NULL;
    END IF;
    s := p #>> '{}';
    groups := string_to_array(s, '-');
    IF cardinality(groups) <> 5 THEN
        RETURN 'must have 5 elements';
    END IF;
    FOR g IN 1..5 LOOP
        IF octet_length(groups[g]) <> want[g] THEN
            RETURN 'element ' || g || ' must be ' || want[g] || ' characters long';
        END IF;
        bad := substring(groups[g] FROM '[^0-9a-fA-F]');
        IF bad IS NOT NULL THEN
            RETURN 'non-hex character ' || jobc_go_quote(bad, 'rune');
        END IF;
    END LOOP;
    RETURN NULL;
END
$$;

-- jobc_go_atoi is Go's strconv.Atoi on a short string: the number, or NULL with the
-- error's text in err. It accepts a sign, as Go's does ("+1").
CREATE OR REPLACE FUNCTION jobc_go_atoi(p text, OUT n bigint, OUT err text)
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF p !~ '^[+-]?[0-9]+$' THEN
        err := 'strconv.Atoi: parsing ' || jobc_go_quote(p, 'string') || ': invalid syntax';
    ELSIF p::numeric NOT BETWEEN -9223372036854775808 AND 9223372036854775807 THEN
        err := 'strconv.Atoi: parsing ' || jobc_go_quote(p, 'string') || ': value out of range';
    ELSE
        n := p::bigint;
    END IF;
END
$$;


-- jobc_go_time_quote quotes as Go's time package quotes in its parse errors: bytes
-- outside printable ASCII as \xNN.
CREATE OR REPLACE FUNCTION jobc_go_time_quote(p text) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
    out text := '"';
    c   text;
BEGIN
    IF p = '' THEN
        RETURN '""';
    END IF;
    FOREACH c IN ARRAY regexp_split_to_array(p, '') LOOP
        IF ascii(c) < 32 OR ascii(c) >= 128 THEN
            out := out || (SELECT string_agg(E'\\x' || lpad(to_hex(get_byte(b, i)), 2, '0'), '' ORDER BY i)
                           FROM (SELECT convert_to(c, 'UTF8') AS b) t, generate_series(0, octet_length(c) - 1) i);
        ELSIF c IN ('"', E'\\') THEN
            out := out || E'\\' || c;
        ELSE
            out := out || c;
        END IF;
    END LOOP;
    RETURN out || '"';
END
$$;

-- jobc_days_in_month counts in the proleptic Gregorian calendar, as Go does (year 0
-- is a leap year; PostgreSQL's dates have no year 0).
CREATE OR REPLACE FUNCTION jobc_days_in_month(p_year integer, p_month integer) RETURNS integer
LANGUAGE sql IMMUTABLE STRICT AS $$
    SELECT CASE WHEN p_month IN (4, 6, 9, 11) THEN 30
                WHEN p_month <> 2 THEN 31
                WHEN p_year % 4 = 0 AND p_year % 100 <> 0 OR p_year % 400 = 0 THEN 29
                ELSE 28 END
$$;

-- jobc_go_parse_date is the error of Go's time.Parse("2006-01-02", p), or NULL.
CREATE OR REPLACE FUNCTION jobc_go_parse_date(p text) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
    v      text := p; -- what is left to parse
    prefix text;
    bad    text;
    y      integer;
    mo     integer;
    d      integer;
BEGIN
    IF p ~ '^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$' THEN -- the common case, fast
        y := left(p, 4)::integer;
        mo := substr(p, 6, 2)::integer;
        d := substr(p, 9, 2)::integer;
        IF d <= jobc_days_in_month(y, mo) THEN
            RETURN NULL;
        END IF;
    END IF;
    prefix := 'parsing time ' || jobc_go_time_quote(p);
    bad := prefix || ' as "2006-01-02": cannot parse ';
    IF v !~ '^[0-9]{4}' THEN
        RETURN bad || jobc_go_time_quote(v) || ' as "2006"';
    END IF;
    y := left(v, 4)::integer;
    v := substr(v, 5);
    IF left(v, 1) <> '-' THEN
        RETURN bad || jobc_go_time_quote(v) || ' as "-"';
    END IF;
    v := substr(v, 2);
    IF v !~ '^[0-9]{2}' THEN
        RETURN bad || jobc_go_time_quote(v) || ' as "01"';
    END IF;
    mo := left(v, 2)::integer;
    IF mo < 1 OR mo > 12 THEN
        RETURN prefix || ': month out of range';
    END IF;
    v := substr(v, 3);
    IF left(v, 1) <> '-' THEN
        RETURN bad || jobc_go_time_quote(v) || ' as "-"';
    END IF;
    v := substr(v, 2);
    IF v !~ '^[0-9]{2}' THEN
        RETURN bad || jobc_go_time_quote(v) || ' as "02"';
    END IF;
    d := left(v, 2)::integer;
    v := substr(v, 3);
    IF v <> '' THEN
        RETURN prefix || ': extra text: ' || jobc_go_time_quote(v);
    END IF;
    IF d < 1 OR d > jobc_days_in_month(y, mo) THEN
        RETURN prefix || ': day out of range';
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION jobc_format_date(p jsonb) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN jsonb_typeof(p) = 'string' THEN jobc_go_parse_date(p #>> '{}') END
$$;

-- jobc_go_time is the Go runtime's check of an RFC 3339 full-time (hh:mm:ss[.f](Z|±hh:mm)).
CREATE OR REPLACE FUNCTION jobc_go_time(p text) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
    b    bytea := convert_to(p, 'UTF8');
    toks text[];
    hms  bigint[] := '{}';
    a    record;
    h    bigint;
    mi   bigint;
    s    bigint;
    rest text;
    sign integer;
    zh   bigint;
    zm   bigint;
    hm   bigint;
BEGIN
    -- The common case, fast: in range, and no leap second to place.
    IF p ~ '^([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]([.][0-9]+)?([zZ]|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$' THEN
        RETURN NULL;
    END IF;
    IF octet_length(b) < 9 THEN
        RETURN 'less than 9 characters long';
    END IF;
    IF get_byte(b, 2) <> 58 OR get_byte(b, 5) <> 58 THEN
        RETURN 'missing colon in correct place';
    END IF;
    IF octet_length(left(p, 8)) <> 8 THEN
        RETURN 'invalid hour/min/sec'; -- a byte of a multi-byte character is no digit
    END IF;
    toks := string_to_array(left(p, 8), ':');
    IF cardinality(toks) > 3 THEN
        toks := toks[1:2] || array_to_string(toks[3:], ':');
    END IF;
    FOR i IN 1..cardinality(toks) LOOP
        a := jobc_go_atoi(toks[i]);
        IF a.err IS NOT NULL THEN
            RETURN 'invalid hour/min/sec';
        END IF;
        IF a.n < 0 THEN
            RETURN 'non-positive hour/min/sec';
        END IF;
        hms := hms || a.n;
    END LOOP;
    IF cardinality(hms) <> 3 THEN
        RETURN 'missing hour/min/sec';
    END IF;
    h := hms[1]; mi := hms[2]; s := hms[3];
    IF h > 23 OR mi > 59 OR s > 60 THEN
        RETURN 'hour/min/sec out of range';
    END IF;
    rest := substr(p, 9);
    IF left(rest, 1) = '.' THEN
        IF substr(rest, 2) !~ '^[0-9]' THEN
            RETURN 'no digits in second fraction';
        END IF;
        rest := regexp_replace(substr(rest, 2), '^[0-9]+', '');
    END IF;
    IF rest NOT IN ('z', 'Z') THEN
        IF octet_length(rest) <> 6 THEN
            RETURN 'offset must be 6 characters long';
        END IF;
        CASE left(rest, 1)
        WHEN '+' THEN sign := -1;
        WHEN '-' THEN sign := 1;
        ELSE RETURN 'offset must begin with plus/minus';
        END CASE;
        rest := substr(rest, 2);
        IF substr(rest, 3, 1) <> ':' THEN
            RETURN 'missing colon in offset in correct place';
        END IF;
        toks := string_to_array(rest, ':');
        toks := toks[1:1] || array_to_string(toks[2:], ':');
        a := jobc_go_atoi(toks[1]);
        IF a.err IS NOT NULL THEN
            RETURN 'invalid hour/min in offset';
        ELSIF a.n < 0 THEN
            RETURN 'non-positive hour/min in offset';
        END IF;
        zh := a.n;
        a := jobc_go_atoi(toks[2]);
        IF a.err IS NOT NULL THEN
            RETURN 'invalid hour/min in offset';
        ELSIF a.n < 0 THEN
            RETURN 'non-positive hour/min in offset';
        END IF;
        zm := a.n;
        IF zh > 23 OR zm > 59 THEN
            RETURN 'hour/min in offset out of range';
        END IF;
        hm := (h * 60 + mi) + sign * (zh * 60 + zm);
        IF hm < 0 THEN
            hm := hm + 24 * 60;
        END IF;
        h := hm / 60;
        mi := hm % 60;
    END IF;
    IF s >= 60 AND (h <> 23 OR mi <> 59) THEN
        RETURN 'invalid leap second';
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION jobc_format_time(p jsonb) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN jsonb_typeof(p) = 'string' THEN jobc_go_time(p #>> '{}') END
$$;

-- jobc_go_date_time is the Go runtime's check of an RFC 3339 date-time.
CREATE OR REPLACE FUNCTION jobc_go_date_time(s text) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
    err text;
BEGIN
    IF octet_length(s) < 20 THEN
        RETURN 'less than 20 characters long';
    END IF;
    IF get_byte(convert_to(s, 'UTF8'), 10) NOT IN (116, 84) THEN -- t, T
        RETURN '11th character must be t or T';
    END IF;
    -- Go slices s[:10] and s[11:] by bytes; left and substr count characters, which
    -- differ once a character before the t takes more than a byte ('ٻ00000000T…'
    -- gave the date element 'ٻ00000000T'). Byte 10 is an ASCII t, so both byte slices
    -- end and begin on character boundaries and are valid text.
    err := jobc_go_parse_date(convert_from(substring(convert_to(s, 'UTF8') FROM 1 FOR 10), 'UTF8'));
    IF err IS NOT NULL THEN
        RETURN 'invalid date element: ' || err;
    END IF;
    err := jobc_go_time(convert_from(substring(convert_to(s, 'UTF8') FROM 12), 'UTF8'));
    IF err IS NOT NULL THEN
        RETURN 'invalid time element: ' || err;
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION jobc_format_date_time(p jsonb) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN jsonb_typeof(p) = 'string' THEN jobc_go_date_time(p #>> '{}') END
$$;

-- jobc_go_ipv4 is the Go runtime's check of a dotted IPv4 address.
CREATE OR REPLACE FUNCTION jobc_go_ipv4(p text) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
    g text;
    a record;
BEGIN
    IF cardinality(string_to_array(p, '.')) <> 4 THEN
        RETURN 'expected four decimals';
    END IF;
    FOREACH g IN ARRAY string_to_array(p, '.') LOOP
        IF octet_length(g) > 1 AND left(g, 1) = '0' THEN
            RETURN 'leading zeros';
        END IF;
        a := jobc_go_atoi(g);
        IF a.err IS NOT NULL THEN
            RETURN a.err;
        END IF;
        IF a.n < 0 OR a.n > 255 THEN
            RETURN 'decimal must be between 0 and 255';
        END IF;
    END LOOP;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION jobc_format_ipv4(p jsonb) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN jsonb_typeof(p) = 'string' THEN jobc_go_ipv4(p #>> '{}') END
$$;

-- jobc_go_hostname is the Go runtime's check of a host name (RFC 1123 labels).
CREATE OR REPLACE FUNCTION jobc_go_hostname(p text) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
    s     text := CASE WHEN right(p, 1) = '.' THEN left(p, -1) ELSE p END;
    label text;
    bad   text;
BEGIN
    IF octet_length(s) > 253 THEN
        RETURN 'more than 253 characters long';
    END IF;
    IF s = '' THEN -- Go splits "" into one empty label; string_to_array into none
        RETURN 'label must be 1 to 63 characters long';
    END IF;
    FOREACH label IN ARRAY string_to_array(s, '.') LOOP
        IF octet_length(label) < 1 OR octet_length(label) > 63 THEN
            RETURN 'label must be 1 to 63 characters long';
        END IF;
        IF left(label, 1) = '-' THEN
            RETURN 'label starts with hyphen';
        END IF;
        IF right(label, 1) = '-' THEN
            RETURN 'label ends with hyphen';
        END IF;
        bad := substring(label FROM '[^a-zA-Z0-9-]');
        IF bad IS NOT NULL THEN
            RETURN 'invalid character ' || jobc_go_quote(bad, 'rune');
        END IF;
    END LOOP;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION jobc_format_hostname(p jsonb) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN jsonb_typeof(p) = 'string' THEN jobc_go_hostname(p #>> '{}') END
$$;

-- jobc_go_quote_bytes is Go's strconv.Quote of bytes that need not be UTF-8: a byte
-- that does not start a valid character is written \xNN, as Go writes it.
CREATE OR REPLACE FUNCTION jobc_go_quote_bytes(p bytea) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
    n   integer := octet_length(p);
    i   integer := 0;
    c   integer;
    len integer;
    ch  text;
    out text := '';
BEGIN
    BEGIN
        RETURN jobc_go_quote(convert_from(p, 'UTF8'), 'string');
    EXCEPTION WHEN character_not_in_repertoire OR untranslatable_character THEN
        NULL; -- not UTF-8: quote it character by character
    END;
    WHILE i < n LOOP
        c := get_byte(p, i);
        len := CASE WHEN c BETWEEN 1 AND 127 THEN 1 WHEN c BETWEEN 194 AND 223 THEN 2
                    WHEN c BETWEEN 224 AND 239 THEN 3 WHEN c BETWEEN 240 AND 244 THEN 4 ELSE 0 END;
        ch := NULL;
        IF len > 0 AND i + len <= n THEN
            BEGIN
                ch := convert_from(substring(p FROM i + 1 FOR len), 'UTF8');
            EXCEPTION WHEN character_not_in_repertoire OR untranslatable_character THEN
                ch := NULL;
            END;
        END IF;
        IF ch IS NULL THEN
            out := out || E'\\x' || lpad(to_hex(c), 2, '0');
            i := i + 1;
        ELSE
            ch := jobc_go_quote(ch, 'string');
            out := out || substr(ch, 2, length(ch) - 2);
            i := i + len;
        END IF;
    END LOOP;
    RETURN '"' || out || '"';
END
$$;

-- jobc_go_parse_ipv4_fields is netip's parseIPv4Fields of the address b from byte
-- p_off to p_end: its error, or NULL. (A database that applied an older library keeps
-- the older jobc_go_parse_ipv4_fields(text, bytea, integer, integer), unused.)
CREATE OR REPLACE FUNCTION jobc_go_parse_ipv4_fields(b bytea, p_off integer, p_end integer) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
    val    integer := 0;
    pos    integer := 0;
    diglen integer := 0;
    c      integer;
    q      text := 'ParseAddr(' || jobc_go_quote_bytes(b) || '): ';
BEGIN
    FOR i IN p_off..p_end - 1 LOOP
        c := get_byte(b, i);
        IF c BETWEEN 48 AND 57 THEN
            IF diglen = 1 AND val = 0 THEN
                RETURN q || 'IPv4 field has octet with leading zero';
            END IF;
            val := val * 10 + c - 48;
            diglen := diglen + 1;
            IF val > 255 THEN
                RETURN q || 'IPv4 field has value >255';
            END IF;
        ELSIF c = 46 THEN
            IF i = p_off OR i = p_end - 1 OR get_byte(b, i - 1) = 46 THEN
                RETURN q || 'IPv4 field must have at least one digit (at '
                    || jobc_go_quote_bytes(substring(b FROM i + 1 FOR p_end - i)) || ')';
            END IF;
            IF pos = 3 THEN
                RETURN q || 'IPv4 address too long';
            END IF;
            pos := pos + 1;
            val := 0;
            diglen := 0;
        ELSE
            RETURN q || 'unexpected character (at '
                || jobc_go_quote_bytes(substring(b FROM i + 1 FOR p_end - i)) || ')';
        END IF;
    END LOOP;
    IF pos < 3 THEN
        RETURN q || 'IPv4 address too short';
    END IF;
    RETURN NULL;
END
$$;

-- jobc_go_ipv6 is the Go runtime's check of an IPv6 address: netip.ParseAddr, and no zone.
CREATE OR REPLACE FUNCTION jobc_go_ipv6(p text) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
    a record;
BEGIN
    IF strpos(p, ':') = 0 THEN
        RETURN 'missing colon';
    END IF;
    a := jobc_go_parse_addr(p);
    IF a.err IS NOT NULL THEN
        RETURN a.err;
    END IF;
    IF a.zone <> '' THEN
        RETURN 'zone id is not a part of ipv6 address';
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION jobc_format_ipv6(p jsonb) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN jsonb_typeof(p) = 'string' THEN jobc_go_ipv6(p #>> '{}') END
$$;

-- jobc_go_parse_addr_bytes is Go's netip.ParseAddr of bytes that need not be UTF-8
-- (a URL's host decoded from %80 is not): its error, or NULL and whether the address
-- is IPv4 and its zone. Ported byte for byte, with Go's messages. The zone is
-- converted to text: the bytes after the first % are UTF-8 from every caller, since
-- jobc_go_url_unescape rejects an escape of a non-ASCII byte in a zone.
CREATE OR REPLACE FUNCTION jobc_go_parse_addr_bytes(b bytea, OUT err text, OUT is4 boolean, OUT zone text)
LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
    n        integer := octet_length(b);
    c        integer;
    s_off    integer := 0; -- what is left to parse: b[s_off:s_end]
    s_end    integer := octet_length(b);
    ip       integer := 0; -- bytes of the address parsed
    ellipsis integer := -1;
    off      integer;
    acc      bigint;
    hv       integer;
    msg      text;
BEGIN
    is4 := false;
    zone := '';
    FOR i IN 0..n - 1 LOOP
        c := get_byte(b, i);
        EXIT WHEN c IN (46, 58, 37);
    END LOOP;
    IF n = 0 OR c NOT IN (46, 58, 37) THEN
        err := 'ParseAddr(' || jobc_go_quote_bytes(b) || '): unable to parse IP';
        RETURN;
    END IF;
    IF c = 37 THEN
        err := 'ParseAddr(' || jobc_go_quote_bytes(b) || '): missing IPv6 address';
        RETURN;
    END IF;
    IF c = 46 THEN
        err := jobc_go_parse_ipv4_fields(b, 0, n);
        is4 := err IS NULL;
        RETURN;
    END IF;
    -- parseIPv6
    IF position('\x25'::bytea IN b) > 0 THEN
        s_end := position('\x25'::bytea IN b) - 1;
        zone := convert_from(substring(b FROM s_end + 2), 'UTF8');
        IF zone = '' THEN
            err := 'ParseAddr(' || jobc_go_quote_bytes(b) || '): zone must be a non-empty string';
            RETURN;
        END IF;
    END IF;
    IF s_end - s_off >= 2 AND get_byte(b, 0) = 58 AND get_byte(b, 1) = 58 THEN
        ellipsis := 0;
        s_off := 2;
        IF s_off = s_end THEN
            RETURN;
        END IF;
    END IF;
    <<fields>>
    WHILE ip < 16 LOOP
        off := 0;
        acc := 0;
        WHILE s_off + off < s_end LOOP
            c := get_byte(b, s_off + off);
            hv := CASE WHEN c BETWEEN 48 AND 57 THEN c - 48 WHEN c BETWEEN 97 AND 102 THEN c - 87
                       WHEN c BETWEEN 65 AND 70 THEN c - 55 END;
            EXIT WHEN hv IS NULL;
            acc := acc * 16 + hv;
            IF off > 3 THEN
                msg := 'each group must have 4 or less digits';
                EXIT fields;
            END IF;
            IF acc > 65535 THEN
                msg := 'IPv6 field has value >=2^16';
                EXIT fields;
            END IF;
            off := off + 1;
        END LOOP;
        IF off = 0 THEN
            msg := 'each colon-separated field must have at least one digit';
            EXIT fields;
        END IF;
        IF s_off + off < s_end AND get_byte(b, s_off + off) = 46 THEN
            IF ellipsis < 0 AND ip <> 12 THEN
                msg := 'embedded IPv4 address must replace the final 2 fields of the address';
                EXIT fields;
            END IF;
            IF ip + 4 > 16 THEN
                msg := 'too many hex fields to fit an embedded IPv4 at the end of the address';
                EXIT fields;
            END IF;
            err := jobc_go_parse_ipv4_fields(b, s_off, s_end);
            IF err IS NOT NULL THEN
                RETURN;
            END IF;
            s_off := s_end;
            ip := ip + 4;
            EXIT fields;
        END IF;
        ip := ip + 2;
        s_off := s_off + off;
        EXIT fields WHEN s_off = s_end;
        IF get_byte(b, s_off) <> 58 THEN
            msg := 'unexpected character, want colon';
            EXIT fields;
        ELSIF s_end - s_off = 1 THEN
            msg := 'colon must be followed by more characters';
            EXIT fields;
        END IF;
        s_off := s_off + 1;
        IF get_byte(b, s_off) = 58 THEN
            IF ellipsis >= 0 THEN
                msg := 'multiple :: in address';
                EXIT fields;
            END IF;
            ellipsis := ip;
            s_off := s_off + 1;
            EXIT fields WHEN s_off = s_end;
        END IF;
    END LOOP;
    IF msg IS NOT NULL THEN
        err := 'ParseAddr(' || jobc_go_quote_bytes(b) || '): ' || msg || ' (at ' || jobc_go_quote_bytes(substring(b FROM s_off + 1 FOR s_end - s_off)) || ')';
        RETURN;
    END IF;
    IF s_off <> s_end THEN
        err := 'ParseAddr(' || jobc_go_quote_bytes(b) || '): trailing garbage after address (at ' || jobc_go_quote_bytes(substring(b FROM s_off + 1 FOR s_end - s_off)) || ')';
    ELSIF ip < 16 AND ellipsis < 0 THEN
        err := 'ParseAddr(' || jobc_go_quote_bytes(b) || '): address string too short';
    ELSIF ip >= 16 AND ellipsis >= 0 THEN
        err := 'ParseAddr(' || jobc_go_quote_bytes(b) || '): the :: must expand to at least one field of zeros';
    END IF;
END
$$;

-- jobc_go_parse_addr is Go's netip.ParseAddr of a string (jobc_go_parse_addr_bytes).
CREATE OR REPLACE FUNCTION jobc_go_parse_addr(p text, OUT err text, OUT is4 boolean, OUT zone text)
LANGUAGE sql IMMUTABLE STRICT AS $$
    SELECT * FROM jobc_go_parse_addr_bytes(convert_to(p, 'UTF8'))
$$;

-- jobc_format_email is the Go runtime's check of an e-mail address.
CREATE OR REPLACE FUNCTION jobc_format_email(p jsonb) RETURNS text
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    s      text;
    at     integer;
    local  text;
    domain text;
    bad    text;
    err    text;
BEGIN
    IF jsonb_typeof(p) IS DISTINCT FROM 'string' THEN
        RETURN NULL;
    END IF;
    s := p #>> '{}';
    IF octet_length(s) > 254 THEN
        RETURN 'more than 255 characters long';
    END IF;
    at := length(s) - strpos(reverse(s), '@') + 1;
    IF strpos(s, '@') = 0 THEN
        RETURN 'missing @';
    END IF;
    local := left(s, at - 1);
    domain := substr(s, at + 1);
    IF octet_length(local) > 64 THEN
        RETURN 'local part more than 64 characters long';
    END IF;
    IF length(local) > 1 AND left(local, 1) = '"' AND right(local, 1) = '"' THEN
        IF substr(local, 2, length(local) - 2) ~ E'[\\\\"]' THEN
            RETURN 'backslash and quote are not allowed within quoted local part';
        END IF;
    ELSE
        IF left(local, 1) = '.' THEN
            RETURN 'starts with dot';
        END IF;
        IF right(local, 1) = '.' THEN
            RETURN 'ends with dot';
        END IF;
        IF strpos(local, '..') > 0 THEN
            RETURN 'consecutive dots';
        END IF;
        bad := substring(local FROM E'[^a-zA-Z0-9.!#$%&''*+/=?^_`{|}~-]');
        IF bad IS NOT NULL THEN
            RETURN 'invalid character ' || jobc_go_quote(bad, 'rune');
        END IF;
    END IF;
    IF left(domain, 1) = '[' AND right(domain, 1) = ']' THEN
        domain := substr(domain, 2, length(domain) - 2);
        IF left(domain, 5) = 'IPv6:' THEN
            err := jobc_go_ipv6(substr(domain, 6));
            IF err IS NOT NULL THEN
                RETURN 'invalid ipv6 address: ' || err;
            END IF;
            RETURN NULL;
        END IF;
        err := jobc_go_ipv4(domain);
        IF err IS NOT NULL THEN
            RETURN 'invalid ipv4 address: ' || err;
        END IF;
        RETURN NULL;
    END IF;
    err := jobc_go_hostname(domain);
    IF err IS NOT NULL THEN
        RETURN 'invalid domain: ' || err;
    END IF;
    RETURN NULL;
END
$$;

-- jobc_go_url_unescape is the error of Go's url.unescape of p (net/url) in p_mode
-- 'path' (any part but the host), 'host' or 'zone' (an IPv6 zone), or NULL: a % not
-- followed by two hex digits; in a host, an escape of an ASCII byte other than %25;
-- in a zone, an escape of a byte a host cannot hold but %25 and %20; in both, a byte
-- a host cannot hold.
CREATE OR REPLACE FUNCTION jobc_go_url_unescape(p text, p_mode text) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
    b   bytea   := convert_to(p, 'UTF8');
    n   integer := octet_length(b);
    i   integer := 0;
    c   integer;
    esc bytea;
    s   text;
BEGIN
    WHILE i < n LOOP
        c := get_byte(b, i);
        IF c = 37 THEN -- %
            IF i + 2 >= n OR NOT (chr(get_byte(b, i + 1)) ~ '[0-9A-Fa-f]' AND chr(get_byte(b, i + 2)) ~ '[0-9A-Fa-f]')
               OR p_mode = 'host' AND chr(get_byte(b, i + 1)) < '8' AND substring(b FROM i + 1 FOR 3) <> '\x253235'::bytea
               OR p_mode = 'zone' AND substring(b FROM i + 1 FOR 3) NOT IN ('\x253235'::bytea, '\x253230'::bytea)
                  AND chr(greatest(('x' || convert_from(substring(b FROM i + 2 FOR 2), 'UTF8'))::bit(8)::integer, 1))
                      !~ E'^[A-Za-z0-9!"$&''()*+,\\-.:;<=>\\[\\]_~]$' THEN
                esc := substring(b FROM i + 1 FOR 3);
                BEGIN
                    s := convert_from(esc, 'UTF8');
                EXCEPTION WHEN character_not_in_repertoire OR untranslatable_character THEN
                    s := NULL;
                END;
                IF s IS NULL THEN -- strconv.Quote writes the bytes of a cut character as \xNN
                    RETURN 'invalid URL escape "' || (SELECT string_agg(CASE WHEN get_byte(esc, k) < 128 THEN chr(get_byte(esc, k))
                        ELSE E'\\x' || lpad(to_hex(get_byte(esc, k)), 2, '0') END, '' ORDER BY k)
                        FROM generate_series(0, octet_length(esc) - 1) k) || '"';
                END IF;
                RETURN 'invalid URL escape ' || jobc_go_quote(s, 'string');
            END IF;
            i := i + 3;
        ELSE
            IF p_mode IN ('host', 'zone') AND c < 128 AND chr(c) !~ E'[A-Za-z0-9!"$&''()*+,\\-.:;<=>\\[\\]_~]' THEN
                RETURN 'invalid character ' || jobc_go_quote(chr(c), 'string') || ' in host name';
            END IF;
            i := i + 1;
        END IF;
    END LOOP;
    RETURN NULL;
END
$$;

-- jobc_go_url_decode_bytes decodes the % escapes of p, which jobc_go_url_unescape
-- accepted, into bytes that, as in Go, need not be UTF-8 (%80). It replaced
-- jobc_go_url_decode(text), which returned text and so NULL for such bytes; a
-- database that applied an older library keeps that function, unused and harmless.
CREATE OR REPLACE FUNCTION jobc_go_url_decode_bytes(p text) RETURNS bytea
LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
    b   bytea   := convert_to(p, 'UTF8');
    out bytea   := '';
    i   integer := 0;
BEGIN
    WHILE i < octet_length(b) LOOP
        IF get_byte(b, i) = 37 THEN
            out := out || decode(convert_from(substring(b FROM i + 2 FOR 2), 'UTF8'), 'hex');
            i := i + 3;
        ELSE
            out := out || substring(b FROM i + 1 FOR 1);
            i := i + 1;
        END IF;
    END LOOP;
    RETURN out;
END
$$;

-- jobc_go_valid_port is Go's validOptionalPort: "" or ":" and digits.
CREATE OR REPLACE FUNCTION jobc_go_valid_port(p text) RETURNS boolean
LANGUAGE sql IMMUTABLE STRICT AS $$ SELECT p = '' OR p ~ '^:[0-9]*$' $$;

-- jobc_go_url is the Go runtime's check of a URI (p_reference false: absolute) or a
-- URI reference: Go's url.Parse, an IPv6 host in brackets, and for a URI a scheme.
-- Ported from net/url and net/netip.
CREATE OR REPLACE FUNCTION jobc_go_url(raw text, p_reference boolean) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
    u         text;
    frag      text;
    scheme    text := '';
    rest      text;
    authority text;
    userinfo  text;
    host      text;
    hostname  text;
    port      text;
    cb        integer;
    i         integer;
    err       text;
    m         text[];
    addr      record;
BEGIN
    u := split_part(raw, '#', 1);
    frag := CASE WHEN strpos(raw, '#') > 0 THEN substr(raw, strpos(raw, '#') + 1) ELSE '' END;
    -- parse(u): every error is reported as parse "<u>": <error>.
    <<parse>>
    BEGIN
        IF u ~ E'[\\x01-\\x1f\\x7f]' THEN
            err := 'net/url: invalid control character in URL';
            EXIT parse;
        END IF;
        IF u = '*' THEN
            EXIT parse;
        END IF;
        IF left(u, 1) = ':' THEN
            err := 'missing protocol scheme';
            EXIT parse;
        END IF;
        m := regexp_match(u, '^([A-Za-z][A-Za-z0-9+.-]*):(.*)$', 's');
        IF m IS NOT NULL THEN
            scheme := lower(m[1]);
            rest := m[2];
        ELSE
            rest := u;
        END IF;
        IF right(rest, 1) = '?' AND length(rest) - length(replace(rest, '?', '')) = 1 THEN
            rest := left(rest, -1);
        ELSE
            rest := split_part(rest, '?', 1);
        END IF;
        IF left(rest, 1) <> '/' THEN
            IF scheme <> '' THEN
                EXIT parse; -- opaque, as mailto:a@b.c
            END IF;
            IF strpos(split_part(rest, '/', 1), ':') > 0 THEN
                err := 'first path segment in URL cannot contain colon';
                EXIT parse;
            END IF;
        END IF;
        IF (scheme <> '' OR left(rest, 3) <> '///') AND left(rest, 2) = '//' THEN
            authority := substr(rest, 3);
            rest := '';
            IF strpos(authority, '/') > 0 THEN
                rest := substr(authority, strpos(authority, '/'));
                authority := left(authority, strpos(authority, '/') - 1);
            END IF;
            -- parseAuthority: the host after the last @, then the user information.
            i := length(authority) - strpos(reverse(authority), '@') + 1;
            IF strpos(authority, '@') = 0 THEN
                host := authority;
                userinfo := NULL;
            ELSE
                host := substr(authority, i + 1);
                userinfo := left(authority, i - 1);
            END IF;
            -- parseHost
            IF strpos(host, '[') > 0 AND length(host) - strpos(reverse(host), '[') + 1 > 1 THEN
                err := 'invalid IP-literal';
                EXIT parse;
            ELSIF left(host, 1) = '[' THEN
                IF strpos(host, ']') = 0 THEN
                    err := 'missing '']'' in host';
                    EXIT parse;
                END IF;
                cb := length(host) - strpos(reverse(host), ']') + 1;
                port := substr(host, cb + 1);
                IF NOT jobc_go_valid_port(port) THEN
                    err := 'invalid port ' || jobc_go_quote(port, 'string') || ' after host';
                    EXIT parse;
                END IF;
                hostname := substr(host, 2, cb - 2);
                IF strpos(hostname, '%25') > 0 THEN -- RFC 6874: %25 starts a zone
                    err := coalesce(jobc_go_url_unescape(left(hostname, strpos(hostname, '%25') - 1), 'host'),
                                    jobc_go_url_unescape(substr(hostname, strpos(hostname, '%25')), 'zone'));
                ELSE
                    err := jobc_go_url_unescape(hostname, 'host');
                END IF;
                EXIT parse WHEN err IS NOT NULL;
                -- Go parses the unescaped bytes, which need not be UTF-8 (%80).
                addr := jobc_go_parse_addr_bytes(jobc_go_url_decode_bytes(hostname));
                IF addr.err IS NOT NULL THEN
                    err := 'invalid host: ' || addr.err;
                    EXIT parse;
                END IF;
                IF addr.is4 THEN
                    err := 'invalid IP-literal';
                    EXIT parse;
                END IF;
            ELSIF strpos(host, ':') > 0 THEN
                i := strpos(host, ':');
                IF scheme NOT IN ('http', 'https') THEN
                    i := length(host) - strpos(reverse(host), ':') + 1;
                END IF;
                port := substr(host, i);
                IF NOT jobc_go_valid_port(port) THEN
                    err := 'invalid port ' || jobc_go_quote(port, 'string') || ' after host';
                    EXIT parse;
                END IF;
            END IF;
            IF left(host, 1) <> '[' THEN
                err := jobc_go_url_unescape(host, 'host');
                EXIT parse WHEN err IS NOT NULL;
            END IF;
            IF userinfo IS NOT NULL THEN
                IF userinfo !~ E'^[A-Za-z0-9\\-._:~!$&''()*+,;=%@]*$' THEN
                    err := 'net/url: invalid userinfo';
                    EXIT parse;
                END IF;
                err := coalesce(jobc_go_url_unescape(split_part(userinfo, ':', 1), 'path'),
                                jobc_go_url_unescape(substr(userinfo, length(split_part(userinfo, ':', 1)) + 2), 'path'));
                EXIT parse WHEN err IS NOT NULL;
            END IF;
        END IF;
        err := jobc_go_url_unescape(rest, 'path'); -- setPath
    END;
    IF err IS NOT NULL THEN
        RETURN 'parse ' || jobc_go_quote(u, 'string') || ': ' || err;
    END IF;
    IF frag <> '' THEN
        err := jobc_go_url_unescape(frag, 'path');
        IF err IS NOT NULL THEN
            RETURN 'parse ' || jobc_go_quote(raw, 'string') || ': ' || err;
        END IF;
    END IF;
    -- validateURI: Go's url does not check an IPv6 host; the runtime does.
    IF left(host, 1) = '[' THEN
        err := jobc_go_ipv6(hostname); -- the address in brackets, decoded
        IF err IS NOT NULL THEN
            RETURN 'invalid ipv6 address: ' || err;
        END IF;
    ELSIF host IS NOT NULL THEN
        hostname := host;
        IF strpos(hostname, ':') > 0 AND jobc_go_valid_port(substr(hostname, length(hostname) - strpos(reverse(hostname), ':') + 1)) THEN
            hostname := left(hostname, length(hostname) - strpos(reverse(hostname), ':'));
        END IF;
        IF strpos(hostname, ':') > 0 THEN
            RETURN 'ipv6 address not enclosed in brackets';
        END IF;
    END IF;
    IF scheme = '' AND NOT p_reference THEN
        RETURN 'relative url';
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION jobc_format_uri(p jsonb) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN jsonb_typeof(p) = 'string' THEN jobc_go_url(p #>> '{}', false) END
$$;

CREATE OR REPLACE FUNCTION jobc_format_uri_reference(p jsonb) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN jsonb_typeof(p) <> 'string' THEN NULL
                WHEN strpos(p #>> '{}', E'\\') > 0 THEN E'contains \\'
                ELSE jobc_go_url(p #>> '{}', true) END
$$;

-- jobc_go_json_pointer is the Go runtime's check of a JSON pointer (RFC 6901): every
-- ~ escapes 0 or 1. (Any other character is allowed.)
CREATE OR REPLACE FUNCTION jobc_go_json_pointer(s text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT AS $$
    SELECT CASE WHEN s = '' THEN NULL
                WHEN left(s, 1) <> '/' THEN 'not starting with /'
                WHEN s ~ '~([^01]|$)' THEN '~ must be followed by 0 or 1' END
$$;

CREATE OR REPLACE FUNCTION jobc_format_json_pointer(p jsonb) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN jsonb_typeof(p) = 'string' THEN jobc_go_json_pointer(p #>> '{}') END
$$;

-- jobc_format_relative_json_pointer: a non-negative integer, then "#" or a JSON pointer.
CREATE OR REPLACE FUNCTION jobc_format_relative_json_pointer(p jsonb) RETURNS text
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    s      text;
    digits text;
BEGIN
    IF jsonb_typeof(p) IS DISTINCT FROM 'string' THEN
        RETURN NULL;
    END IF;
    s := p #>> '{}';
    digits := substring(s FROM '^[0-9]*');
    IF digits = '' THEN
        RETURN 'must start with non-negative integer';
    END IF;
    IF length(digits) > 1 AND left(digits, 1) = '0' THEN
        RETURN 'starts with zero';
    END IF;
    s := substr(s, length(digits) + 1);
    IF s = '#' THEN
        RETURN NULL;
    END IF;
    RETURN jobc_go_json_pointer(s);
END
$$;

-- jobc_go_duration is the Go runtime's check of an ISO 8601 duration (RFC 3339,
-- appendix A): P, then weeks, or date units YMD and time units HMS in order.
CREATE OR REPLACE FUNCTION jobc_go_duration(p text) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
    s      text;
    parts  text[];
    part   text;
    units  text;
    every  text;
    digits text;
    unit   text;
BEGIN
    IF left(p, 1) <> 'P' THEN
        RETURN 'must start with P';
    END IF;
    s := substr(p, 2);
    IF s = '' THEN
        RETURN 'nothing after P';
    END IF;
    IF right(s, 1) = 'W' THEN
        s := left(s, -1);
        IF s = '' THEN
            RETURN 'no number in week';
        END IF;
        IF s ~ '[^0-9]' THEN
            RETURN 'invalid week';
        END IF;
        RETURN NULL;
    END IF;
    parts := string_to_array(s, 'T');
    FOR i IN 1..cardinality(parts) LOOP
        part := parts[i];
        IF i > 1 AND part = '' THEN
            RETURN 'no time elements';
        END IF;
        IF i > 2 THEN
            RETURN 'more than one T';
        END IF;
        every := CASE i WHEN 1 THEN 'YMD' ELSE 'HMS' END;
        units := every;
        WHILE part <> '' LOOP
            digits := substring(part FROM '^[0-9]*');
            IF digits = '' THEN
                RETURN 'missing number';
            END IF;
            part := substr(part, length(digits) + 1);
            IF part = '' THEN
                RETURN 'missing unit';
            END IF;
            unit := left(part, 1);
            IF strpos(units, unit) = 0 THEN
                IF strpos(every, unit) > 0 THEN
                    RETURN 'unit ' || jobc_go_quote(unit, 'rune') || ' out of order';
                END IF;
                RETURN 'invalid unit ' || jobc_go_quote(unit, 'rune');
            END IF;
            units := substr(units, strpos(units, unit) + 1);
            part := substr(part, 2);
        END LOOP;
    END LOOP;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION jobc_format_duration(p jsonb) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN jsonb_typeof(p) = 'string' THEN jobc_go_duration(p #>> '{}') END
$$;

-- jobc_format_period is the Go runtime's check of an RFC 3339 period: start/end, each
-- a date-time, or one of them a duration.
CREATE OR REPLACE FUNCTION jobc_format_period(p jsonb) RETURNS text
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    s     text;
    start text;
    stop  text;
    err   text;
BEGIN
    IF jsonb_typeof(p) IS DISTINCT FROM 'string' THEN
        RETURN NULL;
    END IF;
    s := p #>> '{}';
    IF strpos(s, '/') = 0 THEN
        RETURN 'missing slash';
    END IF;
    start := left(s, strpos(s, '/') - 1);
    stop := substr(s, strpos(s, '/') + 1);
    IF left(start, 1) = 'P' THEN
        err := jobc_go_duration(start);
        IF err IS NOT NULL THEN
            RETURN 'invalid start duration: ' || err;
        END IF;
        err := jobc_go_date_time(stop);
        IF err IS NOT NULL THEN
            RETURN 'invalid end date-time: ' || err;
        END IF;
        RETURN NULL;
    END IF;
    err := jobc_go_date_time(start);
    IF err IS NOT NULL THEN
        RETURN 'invalid start date-time: ' || err;
    END IF;
    IF left(stop, 1) = 'P' THEN
        err := jobc_go_duration(stop);
        IF err IS NOT NULL THEN
            RETURN 'invalid end duration: ' || err;
        END IF;
    ELSE
        err := jobc_go_date_time(stop);
        IF err IS NOT NULL THEN
            RETURN 'invalid end date-time: ' || err;
        END IF;
    END IF;
    RETURN NULL;
END
$$;

-- jobc_format_semver is the Go runtime's check of a semantic version (semver.org).
CREATE OR REPLACE FUNCTION jobc_format_semver(p jsonb) RETURNS text
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    s     text;
    rest  text;
    id    text;
    bad   text;
    core  text[];
    names text[] := ARRAY['major', 'minor', 'patch'];
BEGIN
    IF jsonb_typeof(p) IS DISTINCT FROM 'string' THEN
        RETURN NULL;
    END IF;
    s := p #>> '{}';
    IF strpos(s, '+') > 0 THEN
        rest := substr(s, strpos(s, '+') + 1);
        IF rest = '' THEN
            RETURN 'build is empty';
        END IF;
        FOREACH id IN ARRAY string_to_array(rest, '.') LOOP
            IF id = '' THEN
                RETURN 'build identifier is empty';
            END IF;
            bad := substring(id FROM '[^0-9a-zA-Z-]');
            IF bad IS NOT NULL THEN
                RETURN 'invalid character ' || jobc_go_quote(bad, 'rune') || ' in build identifier';
            END IF;
        END LOOP;
        s := left(s, strpos(s, '+') - 1);
    END IF;
    IF strpos(s, '-') > 0 THEN
        rest := substr(s, strpos(s, '-') + 1);
        IF rest = '' THEN -- Go splits "" into one empty identifier
            RETURN 'pre-release identifier is empty';
        END IF;
        FOREACH id IN ARRAY string_to_array(rest, '.') LOOP
            IF id = '' THEN
                RETURN 'pre-release identifier is empty';
            END IF;
            bad := substring(id FROM '[^0-9a-zA-Z-]');
            IF bad IS NOT NULL THEN
                RETURN 'invalid character ' || jobc_go_quote(bad, 'rune') || ' in pre-release identifier';
            END IF;
            IF id ~ '^[0-9]+$' AND length(id) > 1 AND left(id, 1) = '0' THEN
                RETURN 'pre-release numeric identifier starts with zero';
            END IF;
        END LOOP;
        s := left(s, strpos(s, '-') - 1);
    END IF;
    core := string_to_array(s, '.');
    IF coalesce(cardinality(core), 0) <> 3 THEN
        RETURN 'versionCore must have 3 numbers separated by dot';
    END IF;
    FOR i IN 1..3 LOOP
        IF core[i] = '' THEN
            RETURN names[i] || ' is empty';
        END IF;
        IF length(core[i]) > 1 AND left(core[i], 1) = '0' THEN
            RETURN names[i] || ' starts with zero';
        END IF;
        IF core[i] ~ '[^0-9]' THEN
            RETURN names[i] || ' contains non-digit';
        END IF;
    END LOOP;
    RETURN NULL;
END
$$;
