//! Event density: events per time bucket over the requested range, and the events the tracer
//! discarded (lost) per bucket as a second series; the lost events are also the
//! annotations every output offers.

use std::sync::Arc;

use super::{Output, Registration};
use crate::error::ApiError;
use crate::model::Model;
use crate::params::Params;
use crate::tsp::*;

/// Its id (Trace Compass's histogram provider).
pub const ID: &str = "org.eclipse.tracecompass.internal.tmf.core.histogram.HistogramDataProvider";

/// The series (entry) ids.
pub const EVENTS: i64 = 0;
/// The lost events' series id.
pub const LOST: i64 = 1;

/// The annotation category of lost events.
pub const LOST_CATEGORY: &str = "Lost events";

/// Its registration.
pub fn registration() -> Registration {
    Registration {
        id: ID,
        name: "Histogram",
        description: "Events per time bucket, and events lost by the tracer",
        kind: ProviderType::TreeTimeXy,
        query_parameters: &[],
        make: |m| Box::new(Histogram { model: m }),
    }
}

const DEFAULT_BUCKETS: u64 = 500;

struct Histogram {
    model: Arc<Model>,
}

/// The start of each of `n` equal buckets over the range.
fn bucket_starts(start: i64, end: i64, n: usize) -> Vec<i64> {
    let span = (end as i128 - start as i128).max(0);
    (0..n)
        .map(|i| (start as i128 + span * i as i128 / n.max(1) as i128) as i64)
        .collect()
}

impl Output for Histogram {
    fn id(&self) -> &'static str {
        ID
    }
    fn model(&self) -> &Model {
        &self.model
    }

    fn tree(&self, _p: &Params) -> Result<EntryModel, ApiError> {
        let e = |id, label: &str| Entry {
            id,
            parent_id: -1,
            labels: vec![label.to_string()],
            start: None,
            end: None,
            has_data: true,
            style: None,
            metadata: Default::default(),
        };
        Ok(EntryModel {
            headers: vec![EntryHeader {
                name: "Series".into(),
                tooltip: String::new(),
            }],
            entries: vec![e(EVENTS, "Events"), e(LOST, LOST_CATEGORY)],
            auto_expand_level: -1,
        })
    }

    fn xy(&self, p: &Params) -> Result<XyModel, ApiError> {
        let range = p.required_time_range()?;
        let n = range.nb_times.unwrap_or(DEFAULT_BUCKETS) as usize;
        let items = p.int_list("requested_items")?.unwrap_or(vec![EVENTS, LOST]);
        if let Some(bad) = items.iter().find(|i| **i != EVENTS && **i != LOST) {
            return Err(ApiError::param(
                "requested_items",
                format!("{bad} is not a series of this output (0: events, 1: lost events)"),
            ));
        }
        let (events, lost) = self.model.timeline.event_density(range.start, range.end, n);
        let x = bucket_starts(range.start, range.end, n);
        let series = items
            .into_iter()
            .map(|id| {
                let (name, y, colour) = if id == EVENTS {
                    ("Events", &events, "#3070c0")
                } else {
                    (LOST_CATEGORY, &lost, "#e02020")
                };
                XySeries {
                    series_name: name.into(),
                    series_id: id,
                    x_values_description: XyAxisDescription::new("Time", "ns", "TIMESTAMP"),
                    y_values_description: XyAxisDescription::new("Events", "", "NUMBER"),
                    x_values: x.clone(),
                    y_values: y.iter().map(|v| *v as f64).collect(),
                    style: OutputElementStyle {
                        parent_key: None,
                        values: [
                            ("series-type".to_string(), "bar".into()),
                            ("color".to_string(), colour.into()),
                        ]
                        .into(),
                    },
                }
            })
            .collect();
        Ok(XyModel {
            title: "Event density".into(),
            series,
        })
    }
}

/// The lost events in the requested range as chart annotations, one per bucket that has
/// some (`nbTimes` buckets; 2000 without).
pub fn lost_event_annotations(model: &Model, p: &Params) -> Result<AnnotationModel, ApiError> {
    let range = p.required_time_range()?;
    let n = range.nb_times.unwrap_or(2000) as usize;
    let (_, lost) = model.timeline.event_density(range.start, range.end, n);
    let starts = bucket_starts(range.start, range.end, n);
    let width = ((range.end - range.start) / n.max(1) as i64).max(1);
    let list = lost
        .iter()
        .zip(&starts)
        .filter(|(l, _)| **l > 0)
        .map(|(l, t)| Annotation {
            label: Some(format!("{l} lost events")),
            time: *t,
            duration: width,
            entry_id: -1,
            kind: "CHART".into(),
            style: Some(OutputElementStyle {
                parent_key: None,
                values: [
                    ("color".to_string(), "#ff0000".into()),
                    ("opacity".to_string(), 0.3.into()),
                ]
                .into(),
            }),
        })
        .collect();
    let mut m = AnnotationModel::default();
    m.annotations.insert(LOST_CATEGORY.to_string(), list);
    Ok(m)
}
