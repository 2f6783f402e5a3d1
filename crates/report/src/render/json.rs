//! Pretty JSON: the whole report for the `all` view, the view's own rows
//! otherwise.

use super::Page;

/// The page as pretty JSON.
pub fn render(page: &dyn Page) -> String {
    let mut out = page.json();
    out.push('\n');
    out
}
