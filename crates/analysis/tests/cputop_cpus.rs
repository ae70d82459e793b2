//! cputop keeps small CPU ids in a vector and others in an ordered map: the per-CPU table is in
//! id order and the same whatever the ids.

use analysis::cputop::CpuTop;
use analysis::lami::cell;
use analysis::{Analysis, Common, Range, Table};
use kernel::{Model, Notification, StateOptions};

/// cputop over the same switches on three CPUs whose ids are `ids`.
fn run(ids: [u32; 3]) -> Vec<Table> {
    let model = Model::new(StateOptions::default());
    let mut a = CpuTop::new(Common::default(), 0);
    a.start(0);
    // (time, CPU, switched out, switched in)
    let steps = [
        (10, 0, 0, 5),
        (15, 1, 0, 6),
        (20, 2, 0, 7),
        (30, 0, 5, 8),
        (35, 1, 6, 5),
        (40, 2, 7, 6),
        (50, 0, 8, 0),
        (55, 1, 5, 7),
        (60, 2, 6, 0),
    ];
    for (ts, c, prev_tid, next_tid) in steps {
        let n = Notification::SchedSwitch {
            ts,
            cpu: ids[c],
            prev_tid,
            next_tid,
            next_prio_known: None,
            next_prio: None,
            wakeup: None,
        };
        a.notify(&model.state, &n);
    }
    a.finish(&model, Range { begin: 0, end: 100 })
}

#[test]
fn cpu_ids_dense_and_far() {
    let dense = run([0, 1, 2]);
    let ratio = |t: &Table| -> Vec<_> { t.rows.iter().map(|r| r[1].clone()).collect() };
    assert_eq!(
        ratio(&dense[1]),
        vec![cell::ratio(0.4), cell::ratio(0.85), cell::ratio(0.4)]
    );
    // CPU 4095 is the last dense one: the rows go 7, 4095, 4096.
    for (ids, order) in [([0, 5000, 9000], [0, 1, 2]), ([7, 4096, 4095], [0, 2, 1])] {
        let t = run(ids);
        assert_eq!(t[0].rows, dense[0].rows, "{ids:?}");
        assert_eq!(t[2].rows, dense[2].rows, "{ids:?}");
        let cpus: Vec<_> = t[1].rows.iter().map(|r| r[0].clone()).collect();
        assert_eq!(cpus, order.map(|i| cell::cpu(ids[i])).to_vec(), "{ids:?}");
        let want: Vec<_> = order.iter().map(|&i| ratio(&dense[1])[i].clone()).collect();
        assert_eq!(ratio(&t[1]), want, "{ids:?}");
    }
}
