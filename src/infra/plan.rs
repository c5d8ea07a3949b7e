//! STUB
use super::Tier;
#[derive(Debug, Clone, Default)]
pub struct Removal {
    pub address: String,
    pub action: String,
    pub reason: Option<String>,
    pub previous_address: Option<String>,
}
#[derive(Debug, Clone, Default)]
pub struct PlanSummary {
    pub add: usize,
    pub change: usize,
    pub replace: usize,
    pub destroy: usize,
    pub import: usize,
    pub forget: usize,
    pub read: usize,
    pub removals: Vec<Removal>,
    pub drift: Vec<String>,
    pub outputs_changed: usize,
    pub applyable: bool,
    pub errored: bool,
    pub terraform_version: Option<String>,
}
pub fn summarise(show_json: &[u8]) -> Result<PlanSummary, String> {
    let _ = show_json;
    Err("stub".into())
}
impl PlanSummary {
    pub fn tier(&self) -> Tier {
        if self.destroy + self.replace > 0 { Tier::Destroy } else { Tier::Mutate }
    }
    pub fn headline(&self) -> String {
        String::new()
    }
    pub fn render(&self, context: &[String]) -> String {
        let _ = context;
        String::new()
    }
}
