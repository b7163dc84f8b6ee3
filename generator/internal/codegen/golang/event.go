package golang

import (
	"fmt"
	"strings"

	. "github.com/dave/jennifer/jen"
)

// EventFile renders the Go file of one event: its payload types, its description to
// the runtime, Publish<Event>, Publish<Event>Many and Decode<Event>.
func EventFile(pkg string, e Event) ([]byte, error) {
	f := newFile(pkg, e.Spec.Pos.File)
	importNames(f, e.Imports())
	s := e.Spec
	n := e.Names
	newest := e.Versions[len(e.Versions)-1]
	write := e.Versions[0]
	for _, v := range e.Versions {
		if v.Spec.Number == s.Payload.WriteVersion {
			write = v
		}
	}
	typeVar := n.TypeVar()

	f.Commentf("%s is the name under which %s events are published.", n.NameConst(), s.Name)
	f.Const().Id(n.NameConst()).Op("=").Lit(s.Name)

	for _, v := range e.Versions {
		doc := fmt.Sprintf("%s is version %d of the %s event payload.", n.Version(v.Spec.Number), v.Spec.Number, s.Name)
		if d := strings.TrimSpace(s.Description); d != "" && v == newest {
			doc = joinDoc(doc, d)
		}
		decls(f, v.Declared, doc, filledPayload)
	}
	f.Commentf("%s is the newest %s payload (version %d): the one %s returns.", n.Payload(), s.Name, newest.Spec.Number, n.Decode())
	f.Type().Id(n.Payload()).Op("=").Id(newest.Payload.Root)

	f.Commentf("%s describes %s to the runtime.", typeVar, s.Name)
	f.Var().Id(typeVar).Op("=").Qual(rt, "MustEventType").Call(Qual(rt, "EventType").Add(ordered(eventTypeFields(e)...)))

	what := "one job per subscriber"
	switch {
	case len(e.Subscribers) == 0 && s.Relay:
		what = "its outbox row, for a relay to deliver to the broker"
	case len(e.Subscribers) == 0:
		what = "nothing: it has no subscribers and is not relayed"
	case s.Relay:
		what = "its outbox row, for a relay to deliver to the broker, and one job per subscriber"
	}
	writeDoc(f, fmt.Sprintf("%s publishes one %s event through db: %s. Pass the transaction of the business change "+
		"the event reports: all of it then exists if and only if that transaction commits (with a pool, "+
		"Publish runs its own). The payload is checked against version %d of its schema first; an invalid "+
		"payload returns a *runtime.PayloadError and writes nothing.", n.Publish(), s.Name, what, write.Spec.Number))
	f.Add(signature(n.Publish(), []Code{
		Id("ctx").Qual("context", "Context"),
		Id("db").Qual(rt, "DBTX"),
		Id("e").Id(write.Payload.Root),
		Id("opts").Op("...").Qual(rt, "PublishOption"),
	}, Qual(rt, "Published"), Error()).Block(
		Return(Qual(rt, "Publish").Call(Id("ctx"), Id("db"), Id(typeVar), Id("e"), Id("opts").Op("..."))),
	))

	// What runtime.PublishMany writes, and how: an INSERT ... SELECT FROM unnest per
	// 20,000 rows, but one insert per job for a unique job.
	var writes string
	jobs := "each subscriber's jobs with one statement per 20,000 jobs (one per job for a unique job)"
	switch {
	case len(e.Subscribers) == 0 && s.Relay:
		writes = "their outbox rows with one statement per 20,000 events"
	case len(e.Subscribers) == 0:
		writes = "nothing: it has no subscribers and is not relayed"
	case s.Relay:
		writes = "their outbox rows with one statement per 20,000 events, and " + jobs
	default:
		writes = jobs
	}
	writeDoc(f, fmt.Sprintf("%s publishes many %s events in one transaction (db's, or one it begins and commits "+
		"on a pool): it writes %s. Every payload is checked against version %d of its schema first: if any is "+
		"invalid, it returns a *runtime.PayloadError naming its index and writes nothing. The options apply to "+
		"every event.", n.PublishMany(), s.Name, writes, write.Spec.Number))
	f.Add(signature(n.PublishMany(), []Code{
		Id("ctx").Qual("context", "Context"),
		Id("db").Qual(rt, "DBTX"),
		Id("es").Index().Id(write.Payload.Root),
		Id("opts").Op("...").Qual(rt, "PublishOption"),
	}, Index().Qual(rt, "Published"), Error()).Block(
		Return(Qual(rt, "PublishMany").Call(Id("ctx"), Id("db"), Id(typeVar), Id("es"), Id("opts").Op("..."))),
	))

	writeDoc(f, fmt.Sprintf("%s decodes one %s event as a consumer receives it, of any version this package knows "+
		"(a relay sends it in the Jobc-Version header): it checks data against that version's schema and upcasts "+
		"it to the newest, as workers do with stored jobs.", n.Decode(), s.Name))
	f.Func().Id(n.Decode()).Params(Id("version").Int(), Id("data").Index().Byte()).Params(Id(n.Payload()), Error()).Block(
		List(Id("raw"), Err()).Op(":=").Id(typeVar).Dot("Decode").Call(Id("version"), Id("data")),
		If(Err().Op("!=").Nil()).Block(Return(Id(n.Payload()).Values(), Err())),
		Var().Id("e").Id(n.Payload()),
		If(Err().Op(":=").Qual("encoding/json", "Unmarshal").Call(Id("raw"), Op("&").Id("e")), Err().Op("!=").Nil()).Block(
			Return(Id(n.Payload()).Values(), Qual("fmt", "Errorf").Call(Lit("jobc: decode event "+s.Name+": %w"), Err())),
		),
		Return(Id("e"), Nil()),
	)
	return render(f)
}

func eventTypeFields(e Event) []Code {
	s := e.Spec
	fs := []Code{kv("Name", Id(e.Names.NameConst())), kv("Subject", Lit(s.Subject))}
	if len(s.Key) > 0 {
		fs = append(fs, kv("OrderingKey", stringSlice(s.Key)))
	}
	if s.Relay {
		fs = append(fs, kv("Relay", True()))
	}
	fs = append(fs, kv("WriteVersion", Lit(s.Payload.WriteVersion)))
	var versions []Code
	for i, v := range e.Versions {
		vf := []Code{kv("Number", Lit(v.Spec.Number)), kv("Schema", schemaLit(v.Schema))}
		if i > 0 {
			if up := upcast(e.Names.Upcast(v.Spec.Number), v); up != nil {
				vf = append(vf, kv("Upcast", up))
			}
		}
		versions = append(versions, ordered(vf...))
	}
	fs = append(fs, kv("Versions", Index().Qual(rt, "Version").Add(ordered(versions...))))
	if len(e.Subscribers) > 0 {
		var subs []Code
		for _, sub := range e.Subscribers {
			sf := []Code{kv("Job", Id(sub.Job.TypeVar()))}
			if sub.Spec.Map == nil {
				sf = append(sf, kv("Version", Lit(sub.Version)))
			} else {
				sf = append(sf, kv("Map", Map(String()).String().Add(ordered(mapEntries(sub)...))))
			}
			subs = append(subs, Values(sf...))
		}
		fs = append(fs, kv("Subscribers", Index().Qual(rt, "Subscriber").Add(ordered(subs...))))
	}
	return fs
}

// mapEntries renders a subscriber's map, event field to job field, as written.
func mapEntries(sub Subscriber) []Code {
	out := make([]Code, len(sub.Spec.Map))
	for i, m := range sub.Spec.Map {
		out[i] = Lit(m.From).Op(":").Lit(m.To)
	}
	return out
}
