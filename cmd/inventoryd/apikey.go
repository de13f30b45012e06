package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/internal/auth"
)

var apikeyCommand = command{name: "apikey", args: "create --company UUID --name NAME [--scope read|write] | list [--company UUID] | revoke NAME-or-ID",
	summary: "makes, lists and revokes the API keys that --auth apikey takes"}

// apikeyCmd manages API keys. create prints the new key as the last line of
// its standard output, the only time it is shown; the database keeps its hash.
func apikeyCmd(ctx context.Context, args []string, getenv func(string) string, std stdio) error {
	// The action may come before or after the flags; a word after a flag
	// that takes a value is that value.
	action := ""
	for i, a := range args {
		if (a == "create" || a == "list" || a == "revoke") && (i == 0 || !strings.HasPrefix(args[i-1], "-") || strings.Contains(args[i-1], "=")) {
			action, args = a, append(args[:i:i], args[i+1:]...)
			break
		}
	}
	var company, name, scope string
	cmd := apikeyCommand
	cmd.flags = func(fs *flag.FlagSet) {
		fs.StringVar(&company, "company", "", "the company's UUID (create; list: only its keys)")
		fs.StringVar(&name, "name", "", "create: who the key is for, unique (letters, digits, . _ -)")
		fs.StringVar(&scope, "scope", "read", "create: what the key may do: read, or write (read and write)")
	}
	cfg, rest, err := parseCommandConfig(cmd, args, getenv, std.errOut)
	if err != nil {
		return err
	}
	var companyID uuid.UUID
	if company != "" {
		if companyID, err = uuid.Parse(company); err != nil {
			return fmt.Errorf("--company %q is not a UUID", company)
		}
	}
	switch {
	case action == "create" && (companyID == uuid.Nil || name == "" || len(rest) > 0):
		return fmt.Errorf("usage: inventoryd apikey create --company UUID --name NAME [--scope read|write]")
	case action == "list" && len(rest) > 0:
		return fmt.Errorf("usage: inventoryd apikey list [--company UUID]")
	case action == "revoke" && len(rest) != 1:
		return fmt.Errorf("usage: inventoryd apikey revoke NAME-or-ID")
	case action != "create" && action != "list" && action != "revoke":
		return fmt.Errorf("apikey %q: use create, list or revoke", action)
	}
	st, err := openStore(ctx, cfg, std)
	if err != nil {
		return err
	}
	defer st.Close()
	keys := auth.NewKeys(st.Client)
	switch action {
	case "create":
		key, rec, err := keys.Create(ctx, companyID, name, auth.Scope(scope))
		if err != nil {
			return err
		}
		fmt.Fprintf(std.out, "created API key %q (id %s, scope %s) for company %s; it is shown once, keep it secret:\n%s\n", rec.Name, rec.ID, rec.Scope, rec.CompanyID, key)
	case "list":
		list, err := keys.List(ctx, companyID)
		if err != nil {
			return err
		}
		// In the order of a key's life: made, last used ("never" until
		// it is), revoked.
		w := tabwriter.NewWriter(std.out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "NAME\tID\tCOMPANY\tSCOPE\tCREATED\tLAST USED\tREVOKED")
		for _, k := range list {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.Name, k.ID, k.CompanyID, k.Scope, k.CreatedAt.UTC().Format(time.RFC3339),
				timeOr(k.LastUsedAt, "never"), timeOr(k.RevokedAt, "-"))
		}
		return w.Flush()
	case "revoke":
		rec, err := keys.Revoke(ctx, rest[0])
		if err != nil {
			return err
		}
		fmt.Fprintf(std.out, "revoked API key %q (id %s) of company %s\n", rec.Name, rec.ID, rec.CompanyID)
	}
	return nil
}

// timeOr is t in UTC RFC 3339, or none when there is no t.
func timeOr(t *time.Time, none string) string {
	if t == nil {
		return none
	}
	return t.UTC().Format(time.RFC3339)
}
