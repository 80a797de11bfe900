// Package docs checks kconform's Markdown files as a whole (README.md,
// docs/, results/ and the rest): what no one page's generator or test
// sees, such as a code fence left open, which turns the rest of its page
// into code; and Current, the one check that a generated page is current,
// which the packages that generate pages share.
package docs
