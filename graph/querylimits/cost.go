package querylimits

import (
	"context"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"entgo.io/contrib/entgql"
	"github.com/99designs/gqlgen/graphql"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/fairshare"
	"github.com/propertyrecords/inventory/internal/scalar"
)

// The price of an operation is the most fields its answer can hold: each
// selected field counts once for every object it may be selected on, and a
// list field (marked @listSize in the schema, where its bounds are written)
// multiplies what is selected below it by the size it may return. Below an
// inventory, a list marked perInventory counts at most that many per
// inventory, the bound an import enforces on the whole tree; without it an
// inventory's tree would be priced as 60 rooms of 200 items of 20 photos.
//
// The check runs after validation, once variables are known, and before any
// resolver: an operation over Limits.Cost is refused whole. It is also where
// every size argument is checked against its list's maximum.

// listSize is a @listSize directive, read once from the schema.
type listSize struct {
	slicing      []string
	def, max     int
	sized        []string // nil: the field's own selection
	perInventory int
	priceAt      int // when set, the size priced whatever is asked for
}

// ListSizes maps each list field of the schema to its bounds.
type ListSizes map[*ast.FieldDefinition]*listSize

// ReadListSizes reads the @listSize directives of schema.
func ReadListSizes(schema *ast.Schema) ListSizes {
	out := ListSizes{}
	for _, def := range schema.Types {
		for _, f := range def.Fields {
			d := f.Directives.ForName("listSize")
			if d == nil {
				continue
			}
			ls := &listSize{}
			for _, arg := range d.Arguments {
				switch arg.Name {
				case "slicingArguments":
					ls.slicing = stringsOf(arg.Value)
				case "sizedFields":
					ls.sized = stringsOf(arg.Value)
				case "default":
					ls.def, _ = strconv.Atoi(arg.Value.Raw)
				case "max":
					ls.max, _ = strconv.Atoi(arg.Value.Raw)
				case "perInventory":
					ls.perInventory, _ = strconv.Atoi(arg.Value.Raw)
				case "priceAt":
					ls.priceAt, _ = strconv.Atoi(arg.Value.Raw)
				}
			}
			out[f] = ls
		}
	}
	return out
}

func stringsOf(v *ast.Value) []string {
	var out []string
	for _, c := range v.Children {
		out = append(out, c.Value.Raw)
	}
	return out
}

// CostCheck prices each operation before it runs, and charges the price
// to the caller's budget, if it has one.
type CostCheck struct {
	Limit  int // Limits.Cost
	Lists  ListSizes
	Budget *fairshare.Budget // nil: no budget is charged
}

// CostReport is what an answer says of its operation's cost
// (extensions.cost), named as Shopify's GraphQL API names it, which front
// ends already read.
type CostReport struct {
	RequestedQueryCost int `json:"requestedQueryCost"`
	MaximumQueryCost   int `json:"maximumQueryCost"`
	// ThrottleStatus is the caller's budget after this operation, when it
	// has one.
	ThrottleStatus *fairshare.Status `json:"throttleStatus,omitempty"`
}

// CostStat is the key of an operation's CostReport in its stats, and of
// the answer's extensions that report it.
const CostStat = "cost"

var (
	_ graphql.HandlerExtension        = CostCheck{}
	_ graphql.OperationContextMutator = CostCheck{}
)

func (CostCheck) ExtensionName() string                   { return "Cost" }
func (CostCheck) Validate(graphql.ExecutableSchema) error { return nil }

func (c CostCheck) MutateOperationContext(ctx context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	p := pricer{lists: c.Lists, vars: opCtx.Variables, limit: c.Limit}
	cost := p.selections(opCtx.Operation.SelectionSet, 1, 0, nil)
	switch {
	case p.err != nil:
		return p.err
	case cost > c.Limit:
		return limitError(CodeTooComplex, c.Limit,
			"the operation costs more than %d, the limit: ask for fewer fields, smaller lists or simpler filters (a list multiplies what is selected below it by its size; filters, counts and deep pages add the database's work)", c.Limit)
	}
	report := &CostReport{RequestedQueryCost: cost, MaximumQueryCost: c.Limit}
	opCtx.Stats.SetExtension(CostStat, report)
	if c.Budget == nil {
		return nil
	}
	key := fairshare.KeyFrom(ctx)
	if key == "" {
		return nil // not a request from a client (the server's own lookups)
	}
	status, err := c.Budget.Charge(key, cost, time.Now())
	report.ThrottleStatus = &status
	if err != nil {
		out := gqlerror.Errorf("%s", err.Message)
		out.Extensions = map[string]any{"code": err.Code, "cost": report, "retryAfter": int(math.Ceil(err.RetryAfter.Seconds()))}
		out.Err = err
		return out
	}
	return nil
}

type pricer struct {
	lists ListSizes
	vars  map[string]any
	limit int
	err   *gqlerror.Error
}

// selections prices set, each of whose fields is selected mult times.
// inventories is the number of inventories set is in, through their own
// lists only (0 otherwise), and sized, when set, names the fields of set that
// hold a list, selected sized.mult times instead (a connection's edges).
func (p *pricer) selections(set ast.SelectionSet, mult, inventories int, sized *sizedFields) int {
	total := 0
	for _, sel := range set {
		if p.err != nil || total > p.limit {
			return total
		}
		switch sel := sel.(type) {
		case *ast.Field:
			total = saturate(total + p.field(sel, mult, inventories, sized))
		case *ast.InlineFragment:
			total = saturate(total + p.selections(sel.SelectionSet, mult, withInventories(sel.TypeCondition, mult, inventories), sized))
		case *ast.FragmentSpread:
			if sel.Definition != nil {
				total = saturate(total + p.selections(sel.Definition.SelectionSet, mult, withInventories(sel.Definition.TypeCondition, mult, inventories), sized))
			}
		}
	}
	return total
}

type sizedFields struct {
	names []string
	mult  int
}

func (p *pricer) field(f *ast.Field, mult, inventories int, sized *sizedFields) int {
	if sized != nil && slices.Contains(sized.names, f.Name) {
		mult = sized.mult
	}
	if err := checkCursors(f, p.vars); err != nil {
		p.err = err
		return mult
	}
	cost := saturate(mult + saturate(mult*p.work(f)))
	if p.err != nil || len(f.SelectionSet) == 0 {
		return cost
	}
	childMult, childSized := mult, (*sizedFields)(nil)
	ls := p.lists[f.Definition]
	if ls != nil {
		size, err := ls.size(f, p.vars)
		if err != nil {
			p.err = err
			return cost
		}
		if ls.priceAt > 0 {
			size = ls.priceAt
		}
		listMult := saturate(mult * size)
		if ls.perInventory > 0 && inventories > 0 {
			listMult = min(listMult, saturate(inventories*ls.perInventory))
		}
		if ls.sized != nil {
			childSized = &sizedFields{names: ls.sized, mult: listMult}
		} else {
			childMult = listMult
		}
	}
	// An inventory's own lists (environments, their items, their photos) hold
	// each record of its tree once, so they count against its bounds; any
	// other step (up to a parent, across to a material, into a connection)
	// may reach the same records again, and counts in full.
	switch {
	case f.Definition != nil && f.Definition.Type.Name() == "Inventory":
		inventories = childMult
	case f.Definition != nil && f.Definition.Type.Name() == "InventoryComparison":
		inventories = saturate(2 * childMult) // the trees of two inventories, side by side
	case ls == nil || ls.sized != nil:
		inventories = 0
	}
	return saturate(cost + p.selections(f.SelectionSet, childMult, inventories, childSized))
}

// The database's work beyond the rows it returns is priced in the same unit,
// about one per row it may read, for each time a field is evaluated (see
// docs/decisions.md, "Database work"). No index answers a text search or a
// count: both are priced as the scans they are. The figures are set so that a
// front end's filters and counts cost little beside the records they return,
// while a document built to keep the database busy is over the limit.
const (
	// filterTermPrice: a predicate an index or the row itself answers.
	filterTermPrice = 20
	// textSearchPrice: contains, prefix, suffix and case-folded matches scan
	// the column of every candidate row.
	textSearchPrice = 5_000
	// edgeFilterPrice: hasX and hasXWith run a subquery for the candidates.
	edgeFilterPrice = 2_000
	// countPrice: totalCount, and the count behind every numbered page,
	// reads every matching row.
	countPrice = 2_000
	// repairListPrice: the repair list first finds each property's latest
	// signed inventory, across the company's whole portfolio.
	repairListPrice = 50_000
	// maxOffsetPrice: past the rows there are, an offset skips no more (a
	// page past the last costs its count and the whole list's skip).
	maxOffsetPrice = 100_000
	// writeRowPrice: a row a mutation writes (the inventory, each room and
	// item) costs a hundred read ones: its insert, its indexes, its share of
	// the commit, and its rows deleted when a tree is replaced.
	writeRowPrice = 100
	// photoDecodePrice: addItemPhoto decodes the photo it stores, once, for
	// its thumbnail; thumbnail.MaxDecodeWork bounds that to under a second
	// of a core (0.3 s for a phone's 12 MP photo). Priced at what a
	// company's budget regains in a second (INVENTORY_COST_RESTORE_RATE's
	// default): a full budget takes ten photos at once, then one a second.
	// Those the decode bounds refuse are charged all the same: the price is
	// known before the photo's bytes are read.
	photoDecodePrice = 100_000
)

// work is what the database does to evaluate f once, beyond the rows f
// returns: its filter, a page's count and the rows its offset skips, a
// connection's count, and the repair list's scan; and a photo's decode.
func (p *pricer) work(f *ast.Field) int {
	if f.Definition == nil {
		return 0
	}
	work := 0
	if f.Name == "totalCount" && f.ObjectDefinition != nil && strings.HasSuffix(f.ObjectDefinition.Name, "Connection") {
		work += countPrice
	}
	if f.ObjectDefinition != nil && f.ObjectDefinition.Name == "Query" && (f.Name == "repairs" || f.Name == "repairPage") {
		work += repairListPrice
	}
	if f.ObjectDefinition != nil && f.ObjectDefinition.Name == "Mutation" && f.Name == "addItemPhoto" {
		work += photoDecodePrice
	}
	if len(f.Arguments) == 0 {
		return work
	}
	args := f.ArgumentMap(p.vars)
	if f.ObjectDefinition != nil && f.ObjectDefinition.Name == "Mutation" {
		work = saturate(work + writeRowPrice*rowsWritten(args["input"]))
	}
	if where, ok := args["where"].(map[string]any); ok {
		work = saturate(work + filterPrice(where))
	}
	if strings.HasSuffix(f.Definition.Type.Name(), "Page") {
		page, _ := graphql.UnmarshalInt(args["page"])
		size, _ := graphql.UnmarshalInt(args["pageSize"])
		skipped := min(saturate(max(page-1, 0)*max(size, 0)), maxOffsetPrice) // the rows the offset skips
		work = saturate(work + countPrice + skipped)
	}
	return work
}

// rowsWritten counts the rows a write's input holds: the inventory, and
// each room and item of its tree.
func rowsWritten(input any) int {
	in, _ := input.(map[string]any)
	rows := 1
	envs, _ := in["environments"].([]any)
	for _, env := range envs {
		env, _ := env.(map[string]any)
		items, _ := env["items"].([]any)
		rows += 1 + len(items)
	}
	return rows
}

// filterPrice prices a where input: each predicate by what answers it, and
// and, or and not by what they hold.
func filterPrice(where map[string]any) int {
	price := 0
	for name, v := range where {
		switch {
		case name == "and" || name == "or":
			list, _ := v.([]any)
			for _, w := range list {
				if w, ok := w.(map[string]any); ok {
					price = saturate(price + filterPrice(w))
				}
			}
		case name == "not":
			if w, ok := v.(map[string]any); ok {
				price = saturate(price + filterPrice(w))
			}
		case strings.HasPrefix(name, "has") && strings.HasSuffix(name, "With"):
			price = saturate(price + edgeFilterPrice)
			list, _ := v.([]any)
			if w, ok := v.(map[string]any); ok { // a single value for a list, as GraphQL coerces it
				list = []any{w}
			}
			for _, w := range list {
				if w, ok := w.(map[string]any); ok {
					price = saturate(price + filterPrice(w))
				}
			}
		case strings.HasPrefix(name, "has") && len(name) > 3 && name[3] >= 'A' && name[3] <= 'Z':
			price = saturate(price + edgeFilterPrice)
		case isTextSearch(name):
			price = saturate(price + textSearchPrice)
		default:
			price = saturate(price + filterTermPrice)
		}
	}
	return price
}

// isTextSearch reports whether a where input field is one of entgql's text
// predicates, which no index of ours answers.
func isTextSearch(name string) bool {
	for _, suffix := range []string{"Contains", "ContainsFold", "HasPrefix", "HasSuffix", "EqualFold"} {
		if strings.HasSuffix(name, suffix) {
			return true
		}
	}
	return false
}

func withInventories(typeCondition string, mult, inventories int) int {
	if typeCondition == "Inventory" {
		return mult
	}
	return inventories
}

// size is the size a list field is asked for, checked against its maximum:
// the first of its slicing arguments that is given (a list counts its
// elements, and a single value stands for a list of one, as GraphQL coerces
// it), else the default. A null for a non-null argument (which validation lets
// through from a nullable variable when the argument has a default) is
// refused: gqlgen would read it as 0, and entgql's loading as no limit at all.
func (ls *listSize) size(f *ast.Field, vars map[string]any) (int, *gqlerror.Error) {
	args := f.ArgumentMap(vars)
	for _, name := range ls.slicing {
		v, given := args[name]
		def := f.Definition.Arguments.ForName(name)
		if given && v == nil && def != nil && def.Type.NonNull {
			return 0, argumentError(name, "must not be null")
		}
		if !given || v == nil {
			continue
		}
		n := 1
		switch {
		case def != nil && def.Type.Elem != nil: // a list
			if rv := reflect.ValueOf(v); rv.Kind() == reflect.Slice {
				n = rv.Len()
			}
		default:
			i, err := graphql.UnmarshalInt(v)
			if err != nil {
				return 0, argumentError(name, "must be an integer")
			}
			n = i
		}
		if n < 0 || n > ls.max {
			return 0, argumentError(name, "must be from 0 to %d, got %d", ls.max, n)
		}
		return n, nil
	}
	return ls.def, nil
}

// checkCursors refuses a cursor argument that is not one this API gave out:
// one that does not decode, or whose value is not of the order field's type
// (a time for CREATED_AT, and so on), which would reach SQL and fail there.
// Resolvers would refuse some of these too, but entgql's field collection,
// which loads nested connections before their resolvers run, decodes after
// and before itself and panics on one that does not decode.
func checkCursors(f *ast.Field, vars map[string]any) *gqlerror.Error {
	var args map[string]any
	for _, arg := range f.Arguments {
		def := f.Definition.Arguments.ForName(arg.Name)
		if def == nil || def.Type.Name() != "Cursor" {
			continue
		}
		v, err := arg.Value.Value(vars)
		if err != nil || v == nil {
			continue
		}
		var theirs entgql.Cursor[uuid.UUID]
		ours, err := scalar.UnmarshalCursor(v)
		if err == nil {
			// entgql decodes it again, with the same msgpack, when it loads
			// nested connections: what panics there is refused here.
			err = scalar.DecodeMsgpack(func() error { return theirs.UnmarshalGQL(v) })
		}
		if args == nil {
			args = f.ArgumentMap(vars)
		}
		if err != nil || !cursorFits(ours.Value, orderField(args)) {
			return argumentError(arg.Name, "is not a cursor this API gave out")
		}
	}
	return nil
}

// orderField is the field an orderBy argument names, "" for the default (id).
func orderField(args map[string]any) string {
	orderBy, _ := args["orderBy"].(map[string]any)
	field, _ := orderBy["field"].(string)
	return field
}

// cursorFits reports whether a cursor's value is of the type of the order
// field it was made for: entgql compares it with the field's column in SQL.
func cursorFits(value any, field string) bool {
	if field == "" {
		return value == nil // id order: the id alone
	}
	fits, known := cursorValues[field]
	return known && fits(value)
}

// cursorValues tells the values of each order field of the schema (a test
// holds every order field to having one here).
var cursorValues = map[string]func(any) bool{
	"CREATED_AT":     isTime,
	"SIGNATURE_DATE": isTime,
	"RENTAL_PRICE":   isDecimalText,
	"INVENTORY_TYPE": isInteger,
	"RATING":         isInteger,
	"CODE":           isString,
	"CITY":           isString,
	"NAME":           isString,
}

func isTime(v any) bool { _, ok := v.(time.Time); return ok }

// isString: a NUL would reach SQL, where PostgreSQL cannot compare it.
func isString(v any) bool {
	s, ok := v.(string)
	return ok && strings.IndexByte(s, 0) < 0
}

func isDecimalText(v any) bool {
	s, ok := v.(string)
	_, err := decimal.NewFromString(s)
	return ok && err == nil
}

// isInteger: msgpack decodes small integers to narrow types.
func isInteger(v any) bool {
	rv := reflect.ValueOf(v)
	return rv.IsValid() && (rv.CanInt() || rv.CanUint())
}

// argumentError is apperr's INVALID_ARGUMENT, as the GraphQL error presenter
// would show it.
func argumentError(arg, format string, args ...any) *gqlerror.Error {
	e := apperr.InvalidField(arg, format, args...)
	err := gqlerror.Errorf("%s", e.Error())
	err.Extensions = map[string]any{"code": e.Code, "field": arg}
	err.Err = e
	return err
}

// saturate keeps prices from overflowing: past a billion, an operation is
// refused whatever it adds up to.
func saturate(n int) int { return min(n, 1<<30) }

// DefaultsCache is the executor's query cache. Before a validated document
// is cached, which is before its first run, it writes out the default of
// every list's size argument that the document leaves out. entgql's field
// collection, which builds the SQL that loads nested lists, reads only the
// arguments written in the document; without this a nested connection
// would load every row and apply its default only to what it returns.
type DefaultsCache struct {
	graphql.Cache[*ast.QueryDocument]
	Lists ListSizes
}

func (c DefaultsCache) Add(ctx context.Context, query string, doc *ast.QueryDocument) {
	for _, op := range doc.Operations {
		c.writeDefaults(op.SelectionSet)
	}
	for _, f := range doc.Fragments {
		c.writeDefaults(f.SelectionSet)
	}
	c.Cache.Add(ctx, query, doc)
}

func (c DefaultsCache) writeDefaults(set ast.SelectionSet) {
	for _, sel := range set {
		switch sel := sel.(type) {
		case *ast.Field:
			if ls := c.Lists[sel.Definition]; ls != nil {
				writeDefault(sel, ls)
			}
			c.writeDefaults(sel.SelectionSet)
		case *ast.InlineFragment:
			c.writeDefaults(sel.SelectionSet)
		}
	}
}

func writeDefault(f *ast.Field, ls *listSize) {
	for _, name := range ls.slicing {
		if f.Arguments.ForName(name) != nil {
			return
		}
	}
	for _, name := range ls.slicing {
		if def := f.Definition.Arguments.ForName(name); def != nil && def.DefaultValue != nil {
			f.Arguments = append(f.Arguments, &ast.Argument{Name: name, Value: def.DefaultValue, Position: f.Position})
			return
		}
	}
}
