"""A small polyglot repository, built from strings, shared by the repo map tests."""

from __future__ import annotations

from pathlib import Path

import pytest

POLYGLOT: dict[str, str | bytes] = {
    "app/__init__.py": "",
    "app/models.py": '''\
"""Models."""
from dataclasses import dataclass

MAX_NAME = 40


class Base:
    def save(self) -> None:
        pass


@dataclass
class User(Base):
    name: str

    def greet(self, other: "User") -> str:
        return "hi " + other.name

    class Meta:
        def label(self):
            return "user"
''',
    "app/service.py": '''\
from app.models import User, Base
import app.models


def registered(fn):
    return fn


@registered
def make_user(name: str) -> User:
    user = User(name)
    user.save()
    return user


class Admin(Base):
    def promote(self, user: User) -> None:
        make_user(user.name)
''',
    "app/broken.py": "def ok():\n    return 1\n\ndef broken(:\n    pass\n\nclass AfterError:\n    pass\n",
    "app/latin1.py": b"# caf\xe9 \xff\xfe\ndef encoded(x):\n    return 'na\xefve'\n",
    "web/client.js": '''\
import { BaseClient } from "./base";

export class ApiClient extends BaseClient {
  fetchUser(id) {
    return this.get(`/users/${id}`);
  }
}

export function makeClient() {
  return new ApiClient();
}

const handler = (req) => makeClient().fetchUser(req.id);
''',
    "web/base.js": "export class BaseClient {\n  get(url) {\n    return fetch(url);\n  }\n}\n",
    "web/types.ts": '''\
export interface Account {
  id: Id;
  role: Role;
}

export type Id = string;

export enum Role {
  Admin,
  Guest,
}

export class Store implements Repo {
  load(id: Id): Account {
    return lookup(id);
  }
}
''',
    "web/App.tsx": '''\
import { Store } from "./types";

export function App(props: Props): JSX.Element {
  const store = new Store();
  return <Panel store={store} />;
}
''',
    "cmd/main.go": '''\
package main

import "fmt"

type Shape interface {
	Area() float64
}

type Square struct {
	Side float64
}

func (s *Square) Area() float64 {
	return s.Side * s.Side
}

func main() {
	sq := Square{Side: 2}
	fmt.Println(sq.Area())
}
''',
    "src/Main.java": '''\
package demo;

import java.util.List;

public class Main extends Base implements Runnable {
    @Override
    public void run() {
        helper(List.of());
    }

    static int helper(List<String> xs) {
        return xs.size();
    }
}

interface Greeter {
    String greet(String name);
}
''',
    "src/lib.rs": '''\
use std::fmt::Display;

pub struct Point {
    x: i32,
}

pub trait Area {
    fn area(&self) -> i32;
}

impl Area for Point {
    fn area(&self) -> i32 {
        helper(self.x)
    }
}

fn helper(v: i32) -> i32 {
    v * 2
}

#[derive(Debug)]
pub enum Color {
    Red,
}
''',
    "native/vec.h": "#define VEC_MAX 16\nstruct vec {\n  int len;\n};\nint vec_len(struct vec *v);\n",
    "native/vec.c": '''\
#include "vec.h"

int vec_len(struct vec *v) {
  return v->len;
}

static int twice(int x) { return vec_len(0) + x * 2; }
''',
    "native/shape.cpp": '''\
#include <vector>

namespace geo {
class Shape : public Base {
 public:
  double area() const;
};
}

double geo::Shape::area() const {
  return compute(1.0);
}
''',
    "lib/greeter.rb": '''\
require "json"

module Greeting
  class Greeter < Base
    include Comparable

    def hello(name)
      format_name(name)
    end

    def self.build
      new
    end
  end
end
''',
    "README.md": "# polyglot\n",
    "assets/logo.png": b"\x89PNG\r\n\x1a\n\x00\x00\x00binary",
}


def write_tree(root: Path, files: dict[str, str | bytes]) -> Path:
    """Write `files` (path → text or bytes) under `root` and return it."""
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


@pytest.fixture
def polyglot(tmp_path: Path) -> Path:
    """A fresh copy of the polyglot repository."""
    return write_tree(tmp_path / "polyglot", POLYGLOT)


@pytest.fixture
def cache_dir(tmp_path: Path) -> Path:
    """A private tags cache."""
    return tmp_path / "cache"
