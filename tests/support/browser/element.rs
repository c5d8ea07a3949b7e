//! An element of a [`Session`]'s page, by its WebDriver reference: clicks, typing, its
//! text, attributes, properties and visibility, and elements inside it.

use serde_json::{Value, json};

use super::session::Session;

/// The key of a W3C element reference (`{"element-6066-…": id}`).
const ELEMENT_KEY: &str = "element-6066-11e4-a52e-4f735466cecf";

/// An element; it goes stale (its calls fail the test) once the page drops it.
pub struct Element<'s> {
    session: &'s Session,
    id: String,
}

impl std::fmt::Debug for Element<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Element({})", self.id)
    }
}

impl<'s> Element<'s> {
    pub(crate) fn from_json(session: &'s Session, value: &Value) -> Option<Element<'s>> {
        let id = value.get(ELEMENT_KEY)?.as_str()?.to_string();
        Some(Element { session, id })
    }

    fn path(&self, suffix: &str) -> String {
        format!("/element/{}{suffix}", self.id)
    }

    /// The reference to pass to [`Session::script`] as an argument.
    pub fn json(&self) -> Value {
        json!({ ELEMENT_KEY: self.id })
    }

    /// Clicks it (scrolled into view; fails if something else would get the click).
    pub fn click(&self) {
        self.session.post(&self.path("/click"), &json!({}));
    }

    /// Focuses it and types `text` (characters and [`super::keys`]).
    pub fn send_keys(&self, text: &str) {
        self.session.post(&self.path("/value"), &json!({"text": text}));
    }

    /// Empties an input or textarea.
    pub fn clear(&self) {
        self.session.post(&self.path("/clear"), &json!({}));
    }

    /// Its rendered text (`innerText`-like; empty when hidden).
    pub fn text(&self) -> String {
        self.session.get(&self.path("/text")).as_str().unwrap_or_default().to_string()
    }

    /// An attribute, or `None` when absent.
    pub fn attr(&self, name: &str) -> Option<String> {
        let value = self.session.get(&self.path(&format!("/attribute/{name}")));
        value.as_str().map(str::to_string)
    }

    /// A DOM property (`value`, `checked`, `disabled`, …).
    pub fn prop(&self, name: &str) -> Value {
        self.session.get(&self.path(&format!("/property/{name}")))
    }

    /// A computed CSS value (`color` as `rgba(…)`, `display`, …).
    pub fn css(&self, name: &str) -> String {
        let value = self.session.get(&self.path(&format!("/css/{name}")));
        value.as_str().unwrap_or_default().to_string()
    }

    /// Whether it is displayed.
    pub fn is_displayed(&self) -> bool {
        let value = self.session.get(&self.path("/displayed"));
        value.as_bool().unwrap_or(false)
    }

    /// Whether it is displayed, `None` if that cannot be told (stale, page loading).
    pub fn try_displayed(&self) -> Option<bool> {
        self.session.try_get(&self.path("/displayed")).ok()?.as_bool()
    }

    /// The first element inside it matching `css`.
    pub fn find(&self, css: &str) -> Element<'s> {
        let body = json!({"using": "css selector", "value": css});
        let found = self.session.post(&self.path("/element"), &body);
        Element::from_json(self.session, &found)
            .unwrap_or_else(|| self.session.fail(&format!("no {css:?} inside {self:?}")))
    }

    /// Every element inside it matching `css`.
    pub fn find_all(&self, css: &str) -> Vec<Element<'s>> {
        let body = json!({"using": "css selector", "value": css});
        let found = self.session.post(&self.path("/elements"), &body);
        let list = found.as_array().cloned().unwrap_or_default();
        list.iter().filter_map(|v| Element::from_json(self.session, v)).collect()
    }

    /// Whether it has focus.
    pub fn has_focus(&self) -> bool {
        let value =
            self.session.script("return document.activeElement === arguments[0]", &[self.json()]);
        value.as_bool().unwrap_or(false)
    }
}
