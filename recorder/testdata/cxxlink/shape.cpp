// shape.cpp — a C++ object that needs the C++ library (operator new and
// delete, a virtual destructor, the exception personality).
#include <string>

struct Shape {
	virtual ~Shape() = default;
	std::string name = "square";
};

extern "C" int shape_name_length(void)
{
	Shape *s = new Shape;
	int n = (int)s->name.size();
	delete s;
	return n;
}
