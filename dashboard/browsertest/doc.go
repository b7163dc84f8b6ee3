// Package browsertest drives jobc's web dashboard in headless Chromium (through
// chromedp) against a real PostgreSQL and a running worker: it is a module of its own
// so that the root module's importers never pay for the browser driver.
//
// The tests need a Chromium binary: Debian's chromium package (apt-get install -y
// chromium), or the path in $JOBC_CHROMIUM. They write a screenshot of every page to
// $JOBC_SCREENSHOTS (default: a temporary directory, printed); with JOBC_UPDATE_DOCS=1
// they also rewrite docs/dashboard-overview.png for the README.
package browsertest
