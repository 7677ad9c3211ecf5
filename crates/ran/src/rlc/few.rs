//! [`Few`]: a list that keeps up to `N` items inline and moves to the heap beyond. RLC keeps
//! small lists per PDU and per SN (the SDU pieces a PDU carries, the byte ranges of an SN
//! received so far); with NR's one SDU per PDU nearly all hold one item, and a `Vec` each cost
//! an allocation and a free per packet at each end of the bearer.

use std::fmt;
use std::ops::{Deref, DerefMut};

/// Up to `N` items inline, more on the heap; dereferences to a slice.
#[derive(Clone)]
pub enum Few<T: Copy + Default, const N: usize> {
    Inline { len: u8, buf: [T; N] },
    Heap(Vec<T>),
}

impl<T: Copy + Default, const N: usize> Few<T, N> {
    pub fn new() -> Self {
        Few::Inline {
            len: 0,
            buf: [T::default(); N],
        }
    }
    /// A list of one item.
    pub fn one(x: T) -> Self {
        let mut v = Self::new();
        v.push(x);
        v
    }
    pub fn push(&mut self, x: T) {
        match self {
            Few::Inline { len, buf } if (*len as usize) < N => {
                buf[*len as usize] = x;
                *len += 1;
            }
            Few::Inline { len, buf } => {
                let mut v = Vec::with_capacity(2 * N.max(1));
                v.extend_from_slice(&buf[..*len as usize]);
                v.push(x);
                *self = Few::Heap(v);
            }
            Few::Heap(v) => v.push(x),
        }
    }
    pub fn extend_from_slice(&mut self, xs: &[T]) {
        for &x in xs {
            self.push(x);
        }
    }
}

impl<T: Copy + Default, const N: usize> Default for Few<T, N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Copy + Default, const N: usize> Deref for Few<T, N> {
    type Target = [T];
    #[inline]
    fn deref(&self) -> &[T] {
        match self {
            Few::Inline { len, buf } => &buf[..*len as usize],
            Few::Heap(v) => v,
        }
    }
}

impl<T: Copy + Default, const N: usize> DerefMut for Few<T, N> {
    #[inline]
    fn deref_mut(&mut self) -> &mut [T] {
        match self {
            Few::Inline { len, buf } => &mut buf[..*len as usize],
            Few::Heap(v) => v,
        }
    }
}

impl<'a, T: Copy + Default, const N: usize> IntoIterator for &'a Few<T, N> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<T: Copy + Default, const N: usize> FromIterator<T> for Few<T, N> {
    fn from_iter<I: IntoIterator<Item = T>>(it: I) -> Self {
        let mut v = Self::new();
        for x in it {
            v.push(x);
        }
        v
    }
}

/// Equal when the items are: where they are kept does not matter.
impl<T: Copy + Default + PartialEq, const N: usize> PartialEq for Few<T, N> {
    fn eq(&self, o: &Self) -> bool {
        **self == **o
    }
}
impl<T: Copy + Default + Eq, const N: usize> Eq for Few<T, N> {}

impl<T: Copy + Default + PartialEq, const N: usize> PartialEq<Vec<T>> for Few<T, N> {
    fn eq(&self, o: &Vec<T>) -> bool {
        **self == **o
    }
}

impl<T: Copy + Default + fmt::Debug, const N: usize> fmt::Debug for Few<T, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spills_to_the_heap_past_n_and_keeps_order() {
        let mut v: Few<u32, 2> = Few::new();
        assert!(v.is_empty());
        v.push(1);
        v.push(2);
        assert!(matches!(v, Few::Inline { len: 2, .. }));
        v.push(3);
        assert!(matches!(v, Few::Heap(_)));
        v.extend_from_slice(&[4, 5]);
        assert_eq!(v, vec![1, 2, 3, 4, 5]);
        v[0] = 9;
        v.sort_unstable();
        assert_eq!(&v[..], &[2, 3, 4, 5, 9]);
        let w: Few<u32, 2> = [2, 3, 4, 5, 9].into_iter().collect();
        assert_eq!(v, w);
        assert_eq!(format!("{:?}", Few::<u32, 2>::one(7)), "[7]");
        assert_ne!(Few::<u32, 2>::one(7), Few::<u32, 2>::new());
    }
}
