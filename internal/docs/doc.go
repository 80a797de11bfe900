// Package docs holds what kconform's generated pages have in common:
// Page, a file or a part of one that code or data generates, and the
// writing and checking of a list of them, which `kconform docs` and its
// test share (the list itself is cmd/kconform's, which may import every
// package that generates a page); and checks of kconform's Markdown files
// as a whole (README.md, docs/, results/ and the rest): what no one
// page's generator sees, such as a code fence left open, which turns the
// rest of its page into code.
package docs
