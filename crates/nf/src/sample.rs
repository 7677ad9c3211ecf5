//! Time series written by functions: named tables of typed columns, one row per call.

/// A value of one cell of a row.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SampleValue {
    F64(f64),
    I64(i64),
}

/// One column of a [`Series`].
#[derive(Clone, Debug, PartialEq)]
pub enum SeriesColumn {
    F64(Vec<f64>),
    I64(Vec<i64>),
}

impl SeriesColumn {
    pub fn len(&self) -> usize {
        match self {
            SeriesColumn::F64(v) => v.len(),
            SeriesColumn::I64(v) => v.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A named table; every column has one value per row.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    pub name: String,
    pub columns: Vec<(String, SeriesColumn)>,
}

/// Where functions append their time-series rows (the owner turns each table into
/// `<name>.parquet`; table names should start with the function's kind).
#[derive(Clone, Debug, Default)]
pub struct SampleSink {
    tables: Vec<Series>,
}

impl SampleSink {
    /// Append a row to table `table`. The first row fixes the columns (names and types);
    /// later rows must give the same columns in the same order.
    pub fn push(&mut self, table: &str, row: &[(&str, SampleValue)]) {
        let t = match self.tables.iter().position(|t| t.name == table) {
            Some(i) => &mut self.tables[i],
            None => {
                self.tables.push(Series {
                    name: table.to_string(),
                    columns: row
                        .iter()
                        .map(|(n, v)| {
                            let c = match v {
                                SampleValue::F64(_) => SeriesColumn::F64(Vec::new()),
                                SampleValue::I64(_) => SeriesColumn::I64(Vec::new()),
                            };
                            (n.to_string(), c)
                        })
                        .collect(),
                });
                self.tables.last_mut().expect("just pushed")
            }
        };
        assert_eq!(
            t.columns.len(),
            row.len(),
            "table {table}: every row must give the same columns"
        );
        for ((name, col), (n, v)) in t.columns.iter_mut().zip(row) {
            assert_eq!(name, n, "table {table}: columns in a different order");
            match (col, v) {
                (SeriesColumn::F64(c), SampleValue::F64(x)) => c.push(*x),
                (SeriesColumn::I64(c), SampleValue::I64(x)) => c.push(*x),
                _ => panic!("table {table}: column {n} changed type"),
            }
        }
    }

    /// The tables, in order of their first row.
    pub fn tables(&self) -> &[Series] {
        &self.tables
    }

    /// Take the rows collected so far (tables keep their names and columns).
    pub fn take(&mut self) -> Vec<Series> {
        std::mem::take(&mut self.tables)
    }

    /// Rows of table `name` collected so far.
    pub fn rows(&self, name: &str) -> usize {
        self.tables
            .iter()
            .find(|t| t.name == name)
            .and_then(|t| t.columns.first())
            .map_or(0, |(_, c)| c.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_build_typed_columns() {
        let mut s = SampleSink::default();
        s.push(
            "x_queue",
            &[
                ("time_s", SampleValue::F64(0.1)),
                ("rnti", SampleValue::I64(1)),
            ],
        );
        s.push(
            "x_queue",
            &[
                ("time_s", SampleValue::F64(0.2)),
                ("rnti", SampleValue::I64(2)),
            ],
        );
        s.push("x_other", &[("v", SampleValue::I64(7))]);
        assert_eq!(s.rows("x_queue"), 2);
        assert_eq!(s.rows("x_other"), 1);
        let t = &s.tables()[0];
        assert_eq!(
            t.columns[0],
            ("time_s".into(), SeriesColumn::F64(vec![0.1, 0.2]))
        );
        assert_eq!(t.columns[1], ("rnti".into(), SeriesColumn::I64(vec![1, 2])));
    }

    #[test]
    #[should_panic(expected = "changed type")]
    fn a_column_keeps_its_type() {
        let mut s = SampleSink::default();
        s.push("t", &[("v", SampleValue::I64(1))]);
        s.push("t", &[("v", SampleValue::F64(1.0))]);
    }
}
