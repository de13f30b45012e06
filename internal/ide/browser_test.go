package ide_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/browsertest"
	"github.com/propertyrecords/inventory/internal/datagen"
	"github.com/propertyrecords/inventory/internal/ide"
	"github.com/propertyrecords/inventory/internal/live"
	"github.com/propertyrecords/inventory/internal/server"
	"github.com/propertyrecords/inventory/internal/testdb"
)

// openIDE opens the IDE of a server on the demo records, with live events,
// in Chromium at a desktop's 1500x900, and waits until its editors are
// there: GraphiQL loads CodeMirror after the page, and until then ▶ and
// Ctrl-Enter run nothing.
func openIDE(t *testing.T) (context.Context, *browsertest.Browser, *live.Hub) {
	t.Helper()
	browsertest.Chromium(t) // skipped without it, before the database is made
	st := testdb.DemoRecords.Open(t)
	hub := live.New(st.Client, st.Dialect(), st.PrimaryConfig(), slog.New(slog.DiscardHandler), live.Options{Poll: 20 * time.Millisecond})
	hubCtx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { hub.Run(hubCtx); close(done) }()
	t.Cleanup(func() { stop(); <-done })
	srv := apitest.NewServerWith(t, st, server.Options{Files: apitest.Files(t), IDECompany: datagen.DemoCompanies[0],
		Live: server.LiveOptions{Hub: hub}})

	ctx, browser := browsertest.Start(t, 90*time.Second)
	if err := chromedp.Run(ctx,
		chromedp.EmulateViewport(1500, 900),
		chromedp.Navigate(srv.URL+"/"),
		chromedp.WaitReady(".graphiql-query-editor .CodeMirror", chromedp.ByQuery),
		chromedp.WaitReady("#graphiql-session-tab-3", chromedp.ByID),
	); err != nil {
		t.Fatalf("opening the IDE in Chromium: %v", err)
	}
	t.Cleanup(func() {
		for _, c := range browser.Complaints() {
			t.Errorf("the browser complained: %s", c)
		}
		for _, u := range browser.Requested() {
			if !strings.HasPrefix(u, srv.URL+"/") && !strings.HasPrefix(u, "data:") {
				t.Errorf("the page asked for %s: it must ask nothing of any other server", u)
			}
		}
	})
	return ctx, browser, hub
}

// runOperation runs one of the active tab's operations as a user does
// once ▶ has been used: the cursor in the operation, Ctrl-Enter. Not before
// GraphiQL has read the tab's document (it does 100 ms after a change, the
// change of tab included): until then Ctrl-Enter runs the operation of the
// document before. Nor while the operation before is still running: then
// Ctrl-Enter stops it (the button says "Stop query"), which a loaded
// machine showed, the last operation's event listed before its answer.
func runOperation(name string) chromedp.Action {
	return chromedp.ActionFunc(func(ctx context.Context) error {
		const editor = `document.querySelector('.graphiql-query-editor .CodeMirror').CodeMirror`
		if err := chromedp.Poll(fmt.Sprintf(`(%s.operations || []).some((o) => o.name && o.name.value === %q)`, editor, name), nil).Do(ctx); err != nil {
			return fmt.Errorf("the tab has no operation %s: %w", name, err)
		}
		if err := chromedp.Poll(`(document.querySelector('.graphiql-execute-button')?.getAttribute('aria-label') || '').startsWith('Execute')`, nil).Do(ctx); err != nil {
			return fmt.Errorf("the operation before %s still runs: %w", name, err)
		}
		if err := chromedp.Evaluate(fmt.Sprintf(`(() => {
			const cm = %s;
			const op = cm.operations.find((o) => o.name && o.name.value === %q);
			cm.focus();
			cm.setCursor(cm.posFromIndex(op.loc.start + 1));
		})()`, editor, name), nil).Do(ctx); err != nil {
			return err
		}
		return chromedp.KeyEvent("\r", chromedp.KeyModifiers(input.ModifierCtrl)).Do(ctx)
	})
}

// Issue 38, point 1: the Live events panel follows the capture tab's
// property with a subscription of its own. Opened on the live tab, it
// keeps following while the capture tab's operations run (GraphiQL stops
// its own subscription when the tab changes), and lists every event, the
// owner's signature and the full signature included, each with its kind,
// time, inventory and cursor.
func TestTheLivePanelListsEveryEventWhileTheCaptureTabRunsInChromium(t *testing.T) {
	ctx, _, hub := openIDE(t)
	if err := chromedp.Run(ctx,
		chromedp.Click("#graphiql-session-tab-2", chromedp.ByID),
		chromedp.Click(`button[aria-label="Show Live events"]`, chromedp.ByQuery),
		chromedp.WaitVisible(".live .live-events", chromedp.ByQuery),
	); err != nil {
		t.Fatalf("opening the Live events panel: %v", err)
	}
	// The panel's subscription reached the server before the first write.
	for hub.Stats().Subscribers == 0 {
		select {
		case <-ctx.Done():
			t.Fatal("the panel's subscription never reached the server")
		case <-time.After(10 * time.Millisecond):
		}
	}

	listed := func(n int) chromedp.Action {
		return chromedp.Poll(fmt.Sprintf(`document.querySelectorAll('.live .live-event').length >= %d`, n), nil)
	}
	if err := chromedp.Run(ctx,
		chromedp.Click("#graphiql-session-tab-3", chromedp.ByID),
		runOperation("CreateInventory"), listed(1),
		runOperation("SignAsAgent"), listed(2),
		runOperation("SignAsOwner"), listed(4),
	); err != nil {
		var panel, result string
		_ = chromedp.Run(ctx, chromedp.Text(".live", &panel, chromedp.ByQuery), chromedp.Text(".result-window", &result, chromedp.ByQuery))
		t.Fatalf("running the capture tab: %v; the panel says:\n%s\nthe result:\n%s", err, panel, result)
	}
	var events []struct {
		Kind, Text, At string
	}
	if err := chromedp.Run(ctx, chromedp.Evaluate(`[...document.querySelectorAll('.live .live-event')].map((li) => ({
		kind: li.dataset.kind, text: li.innerText, at: li.querySelector('time').dateTime }))`, &events)); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range events {
		kinds = append(kinds, e.Kind)
	}
	if len(kinds) < 4 || strings.Join(kinds[:4], " ") != "INVENTORY_CREATED AGENT_SIGNED OWNER_SIGNED FULLY_SIGNED" {
		t.Fatalf("the panel lists %v; want INVENTORY_CREATED, AGENT_SIGNED, OWNER_SIGNED, FULLY_SIGNED", kinds)
	}
	inventory := ide.CaptureInventoryFor(ide.DefaultRequired).String()
	for _, e := range events[:4] {
		if _, err := time.Parse(time.RFC3339, e.At); err != nil || !strings.Contains(e.Text, inventory) || !strings.Contains(e.Text, "Cursor ") {
			t.Errorf("the %s event shows %q at %q: want its time, the capture tab's inventory %s and its cursor", e.Kind, e.Text, e.At, inventory)
		}
	}
}

// Issue 38, point 3: at 1500 pixels wide, no line of any tab is cut at
// its editor's right edge: every editor shown (the document, its
// variables or its headers, the result) is as wide as its widest line.
func TestEveryTabFitsItsEditorAt1500PixelsInChromium(t *testing.T) {
	ctx, _, _ := openIDE(t)
	for tab := range 4 {
		for _, tool := range []string{"Variables", "Headers"} {
			var cut []string
			if err := chromedp.Run(ctx,
				chromedp.Click(fmt.Sprintf("#graphiql-session-tab-%d", tab), chromedp.ByID),
				chromedp.Click(fmt.Sprintf(`//div[@class="graphiql-editor-tools"]/button[normalize-space()=%q]`, tool), chromedp.BySearch),
				// GraphiQL has read the tab's document (100 ms after the change).
				chromedp.Poll(fmt.Sprintf(`document.querySelector('.graphiql-query-editor .CodeMirror').CodeMirror.operations !== null &&
					document.querySelector('#graphiql-session-tab-%d').closest('.graphiql-tab').classList.contains('graphiql-tab-active')`, tab), nil),
				chromedp.Evaluate(`[...document.querySelectorAll('.graphiql-session .CodeMirror')].filter((el) => el.offsetParent).flatMap((el) => {
					const cm = el.CodeMirror, info = cm.getScrollInfo();
					const widest = cm.getValue().split('\n').reduce((w, l) => l.length > w.length ? l : w, '');
					return info.width > info.clientWidth ? [el.parentElement.className + ': ' + info.width + ' > ' + info.clientWidth + ' px: ' + widest] : [];
				})`, &cut),
			); err != nil {
				t.Fatalf("tab %d, %s: %v", tab, tool, err)
			}
			for _, c := range cut {
				t.Errorf("tab %d, %s: a line is cut: %s", tab, tool, c)
			}
		}
	}
}
