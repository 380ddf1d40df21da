//! A capsule's markdown as HTML that cannot run anything: raw HTML in the text is shown as
//! text, and a link or image goes only to `http:`, `https:`, `mailto:` or a relative address
//! (`javascript:` and the rest become `#`).

use pulldown_cmark::{CowStr, Event, Options, Parser, Tag};

/// Whether a link destination may stay as written.
fn safe_url(url: &str) -> bool {
    let lower = url.trim().to_ascii_lowercase();
    match lower.find(':') {
        // A scheme comes before any '/', '?' or '#'.
        Some(i) if !lower[..i].contains(['/', '?', '#']) => {
            matches!(&lower[..i], "http" | "https" | "mailto")
        }
        _ => true,
    }
}

/// `url` if it may stay as written, else `#`.
fn checked(url: CowStr<'_>) -> CowStr<'_> {
    if safe_url(&url) {
        url
    } else {
        CowStr::from("#")
    }
}

/// `text` (markdown) as inert HTML.
pub fn to_html(text: &str) -> String {
    let events =
        Parser::new_ext(text, Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH).map(|e| {
            match e {
                Event::Html(h) | Event::InlineHtml(h) => Event::Text(h),
                Event::Start(Tag::Link {
                    link_type,
                    dest_url,
                    title,
                    id,
                }) => Event::Start(Tag::Link {
                    link_type,
                    dest_url: checked(dest_url),
                    title,
                    id,
                }),
                Event::Start(Tag::Image {
                    link_type,
                    dest_url,
                    title,
                    id,
                }) => Event::Start(Tag::Image {
                    link_type,
                    dest_url: checked(dest_url),
                    title,
                    id,
                }),
                other => other,
            }
        });
    let mut out = String::with_capacity(text.len() * 3 / 2);
    pulldown_cmark::html::push_html(&mut out, events);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_and_script_links_render_inert() {
        let html = to_html(
            "## Goal\n<script>alert(1)</script>\n\n[x](javascript:alert(1)) \
             [y](JavaScript:alert(2)) [ok](https://example.com/a) <img src=x onerror=alert(3)>",
        );
        assert!(!html.contains("<script"), "{html}");
        assert!(!html.contains("<img"), "{html}");
        assert!(
            !html.to_ascii_lowercase().contains("href=\"javascript"),
            "{html}"
        );
        assert!(html.contains("&lt;script&gt;"), "{html}");
        assert!(html.contains("href=\"https://example.com/a\""), "{html}");
        assert!(html.contains("<h2>Goal</h2>"), "{html}");
    }
}
